// The question box: Enter sends, Shift+Enter starts a new line; Stop (or Esc) ends a turn.
import { useEffect, useRef, useState, type ReactNode } from "react";
import { useI18n } from "../i18n";

interface Props {
  folder: string;
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** Shown on the hint's line, at its end: the context meter. */
  status?: ReactNode;
}

export function Composer({ folder, busy, onSend, onStop, status }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    area.current?.focus();
  }, []);

  const send = () => {
    if (busy || !text.trim()) return;
    onSend(text);
    setText("");
  };

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        ref={area}
        value={text}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        placeholder={t("composerPlaceholder", { folder })}
        aria-label={t("composerPlaceholder", { folder })}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      <div className="composer-side">
        {busy ? (
          <button type="button" className="stop" onClick={onStop}>
            ■ {t("stop")}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!text.trim()}>
            {t("send")}
          </button>
        )}
      </div>
      <div className="composer-foot">
        <span className="composer-hint muted">{t("composerHint")}</span>
        {status}
      </div>
    </form>
  );
}
