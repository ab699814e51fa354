// The inline card for a call that waits for the user. It shows exactly what would run, where,
// and why it asks; it never decides by itself.
import { useEffect, useRef, useState } from "react";
import type { ApprovalReply } from "../bindings";
import { useI18n } from "../i18n";
import { argumentsText, type CallView } from "../state/chat";
import { DiffView } from "./lazyRenderers";

interface Props {
  call: CallView;
  /** The first waiting card takes the keyboard shortcuts. */
  primary: boolean;
  onAnswer: (callId: string, reply: ApprovalReply) => Promise<void>;
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable);
}

export function ApprovalCard({ call, primary, onAnswer }: Props) {
  const { t } = useI18n();
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState("");
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);
  const cardRef = useRef<HTMLElement>(null);
  const ask = call.ask;
  const onceOnly = ask?.onceOnly === true;

  const answer = (reply: ApprovalReply) => {
    setSent(true);
    onAnswer(call.callId, reply).catch((error: unknown) => {
      setSent(false);
      setFailure(error instanceof Error ? error.message : String((error as { message?: string })?.message ?? error));
    });
  };

  useEffect(() => {
    if (denying) reasonRef.current?.focus();
  }, [denying]);

  // Bring the card to the keyboard, unless the user is in the middle of typing something.
  useEffect(() => {
    if (!primary) return;
    const active = document.activeElement;
    const busyTyping = isTyping(active) && (active as HTMLTextAreaElement).value !== "";
    cardRef.current?.scrollIntoView({ block: "nearest" });
    if (!busyTyping) cardRef.current?.focus({ preventScroll: true });
  }, [primary]);

  useEffect(() => {
    if (!primary || sent) return;
    const onKey = (event: KeyboardEvent) => {
      // Plain letters only when not typing; with Alt they work from the question box too.
      if (event.ctrlKey || event.metaKey || (isTyping(event.target) && !event.altKey)) return;
      const key = event.key.toLowerCase();
      const code = event.code;
      if (key === "y" || code === "KeyY") {
        event.preventDefault();
        answer({ decision: "allow_once" });
      } else if (!onceOnly && (key === "a" || code === "KeyA")) {
        event.preventDefault();
        answer({ decision: "allow_for_conversation" });
      } else if (!onceOnly && ask?.rule && (key === "w" || code === "KeyW")) {
        event.preventDefault();
        answer({ decision: "allow_in_workspace" });
      } else if (key === "n" || code === "KeyN") {
        event.preventDefault();
        setDenying(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const isShell = call.tool === "execute_bash";
  return (
    <section className="approval-card" aria-label={t("approvalLabel")} data-call-id={call.callId} ref={cardRef} tabIndex={-1}>
      <header className="approval-title">{isShell ? t("approvalTitle") : t("approvalTitleTool", { tool: call.tool })}</header>
      <pre className="approval-command">
        <code>{ask?.summary ?? argumentsText(call)}</code>
      </pre>
      {ask?.cwd !== undefined && (
        <div className="approval-cwd">
          {ask.cwd === "." || ask.cwd === "" ? t("approvalFolderRoot") : t("approvalFolder", { cwd: ask.cwd })}
        </div>
      )}
      {ask?.change && <DiffView change={ask.change} />}
      {ask?.reason && <div className="approval-reason">{t("approvalWhy", { reason: ask.reason })}</div>}
      {onceOnly && <div className="approval-once muted">{t("approvalOnceOnly")}</div>}
      {failure && <div className="approval-failure">{failure}</div>}
      {denying ? (
        <form
          className="approval-deny"
          onSubmit={(event) => {
            event.preventDefault();
            answer({ decision: "deny", reason: reason.trim() || null });
          }}
        >
          <input
            ref={reasonRef}
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            placeholder={t("denyReasonPlaceholder")}
            aria-label={t("denyReasonPlaceholder")}
            onKeyDown={(event) => {
              if (event.key === "Escape") {
                event.stopPropagation();
                setDenying(false);
              }
            }}
            disabled={sent}
          />
          <button type="submit" className="danger" disabled={sent}>
            {t("denyConfirm")}
          </button>
          <button type="button" onClick={() => setDenying(false)} disabled={sent}>
            {t("cancel")}
          </button>
        </form>
      ) : (
        <div className="approval-actions">
          <button type="button" className="primary" disabled={sent} onClick={() => answer({ decision: "allow_once" })}>
            {t("allowOnce")} <kbd>Y</kbd>
          </button>
          {!onceOnly && (
            <button type="button" disabled={sent} onClick={() => answer({ decision: "allow_for_conversation" })}>
              {t("allowConversation")} <kbd>A</kbd>
            </button>
          )}
          {!onceOnly && ask?.rule && (
            <button
              type="button"
              disabled={sent}
              title={t("allowWorkspaceHint", { rule: ask.rule })}
              onClick={() => answer({ decision: "allow_in_workspace" })}
            >
              {t("allowWorkspace")} <kbd>W</kbd>
            </button>
          )}
          <button type="button" className="danger" disabled={sent} onClick={() => setDenying(true)}>
            {t("deny")} <kbd>N</kbd>
          </button>
        </div>
      )}
      {sent && <div className="approval-sent">{t("approvalSent")}</div>}
      {!sent && !denying && ask?.rule && <div className="approval-rule">{t("allowWorkspaceHint", { rule: ask.rule })}</div>}
      {!sent && !denying && (
        <div className="approval-keys muted">{t(onceOnly ? "approvalKeysOnce" : ask?.rule ? "approvalKeysRule" : "approvalKeys")}</div>
      )}
    </section>
  );
}
