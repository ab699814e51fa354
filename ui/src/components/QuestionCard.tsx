// The inline card for a question the model asks (`ask_user`): the choices as buttons, a field
// for an answer of one's own, and a way to dismiss it. Keyboard: 1–9 picks a choice, Enter
// answers, Escape dismisses.
import { useEffect, useRef, useState } from "react";
import { useI18n } from "../i18n";
import type { CallView } from "../state/chat";

interface Props {
  call: CallView;
  /** The first waiting card takes the keyboard. */
  primary: boolean;
  onAnswer: (callId: string, answer: string | null) => Promise<void>;
}

export function QuestionCard({ call, primary, onAnswer }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const question = call.question;

  const answer = (value: string | null) => {
    if (value !== null && value.trim() === "") return;
    setSent(true);
    setFailure(null);
    onAnswer(call.callId, value === null ? null : value.trim()).catch((error: unknown) => {
      setSent(false);
      setFailure(error instanceof Error ? error.message : String((error as { message?: string })?.message ?? error));
    });
  };

  useEffect(() => {
    if (!primary) return;
    input.current?.scrollIntoView({ block: "nearest" });
    const active = document.activeElement;
    const busyTyping = active instanceof HTMLTextAreaElement && active.value !== "";
    if (!busyTyping) input.current?.focus({ preventScroll: true });
  }, [primary]);

  if (!question) return null;
  return (
    <section className="question-card" aria-label={t("questionLabel")} data-call-id={call.callId}>
      <header className="question-title">{t("questionLabel")}</header>
      <p className="question-text">{question.text}</p>
      {question.choices.length > 0 && (
        <div className="question-choices">
          {question.choices.map((choice, i) => (
            <button type="button" key={i} disabled={sent} onClick={() => answer(choice)}>
              {i < 9 && <kbd>{i + 1}</kbd>} {choice}
            </button>
          ))}
        </div>
      )}
      <form
        className="question-form"
        onSubmit={(event) => {
          event.preventDefault();
          answer(text);
        }}
      >
        <input
          ref={input}
          value={text}
          disabled={sent}
          placeholder={t("questionPlaceholder")}
          aria-label={t("questionPlaceholder")}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Escape") {
              event.preventDefault();
              answer(null);
            } else if (text === "" && /^[1-9]$/.test(event.key)) {
              const choice = question.choices[Number(event.key) - 1];
              if (choice !== undefined) {
                event.preventDefault();
                answer(choice);
              }
            }
          }}
        />
        <button type="submit" className="primary" disabled={sent || text.trim() === ""}>
          {t("questionSend")}
        </button>
        <button type="button" disabled={sent} onClick={() => answer(null)}>
          {t("questionDismiss")} <kbd>Esc</kbd>
        </button>
      </form>
      {failure && <div className="approval-failure">{failure}</div>}
      {sent ? <div className="approval-sent">{t("questionSent")}</div> : <div className="approval-keys muted">{t("questionKeys")}</div>}
    </section>
  );
}
