// Where signing in to one MCP server stands, with the button that moves it on: "Sign in" when
// the server needs it (or the last try failed, with the reason), the page to open while the
// browser is out, "Signed in as …" (and, where asked for, "Sign out") once done. The sidebar,
// Settings → MCP and a timeline card whose call failed for want of sign-in all show this.
import { useState } from "react";
import { api, errorMessage, type McpServerView } from "../api";
import { useI18n } from "../i18n";

interface Props {
  server: McpServerView;
  /** Offer "Sign out" once signed in (Settings). */
  signOut?: boolean;
}

export function McpSignIn({ server, signOut = false }: Props) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const state = server.sign_in;
  if (!state || state.state === "not_needed") return null;

  const run = (action: (name: string) => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    action(server.name)
      .catch((error: unknown) => setProblem(errorMessage(error)))
      .finally(() => setBusy(false));
  };
  const signInButton = (label: string) => (
    <button type="button" className="small" disabled={busy} onClick={() => run(api.mcpSignIn)} data-testid="mcp-sign-in">
      {label}
    </button>
  );

  return (
    <div className={`mcp-sign-in mcp-sign-in-${state.state}`} data-testid="mcp-sign-in-state" data-state={state.state}>
      {state.state === "needed" && (
        <>
          <span className="small-text">{t("mcpSignInNeeded")}</span>
          {signInButton(t("mcpSignIn"))}
        </>
      )}
      {state.state === "waiting" && (
        <>
          <span className="small-text">{t("mcpSignInWaiting")}</span>
          <span className="muted small-text">{t("mcpSignInWaitingHint")}</span>
          <code className="small-text mcp-sign-in-url">{state.url}</code>
        </>
      )}
      {state.state === "signed_in" && (
        <>
          <span className="small-text">{state.identity ? t("mcpSignedInAs", { who: state.identity }) : t("mcpSignedIn")}</span>
          {signOut && (
            <button type="button" className="small" disabled={busy} onClick={() => run(api.mcpSignOut)} data-testid="mcp-sign-out">
              {t("mcpSignOut")}
            </button>
          )}
        </>
      )}
      {state.state === "failed" && (
        <>
          <span className="small-text mcp-error">{t("mcpSignInFailed", { reason: state.reason })}</span>
          {signInButton(t("mcpSignInAgain"))}
        </>
      )}
      {/* A sign-in that failed says why in its state; other trouble is said here. */}
      {problem && state.state !== "failed" && <span className="small-text mcp-error">{problem}</span>}
    </div>
  );
}

/** Whether the server's trouble is signing in (then the sign-in line says it, not the error). */
export function signInAsked(server: McpServerView): boolean {
  const state = server.sign_in?.state;
  return state === "needed" || state === "failed" || state === "waiting";
}

/** The server named by a call's error that failed for want of sign-in, else `null`. */
export function serverNeedingSignIn(error: string | null | undefined): string | null {
  const found = error?.match(/MCP server "([^"]+)" needs you to sign in/);
  return found?.[1] ?? null;
}

/** On a timeline card: the call failed because `server` needs sign-in; the button starts it. */
export function CallNeedsSignIn({ server }: { server: string }) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <div className="mcp-sign-in" data-testid="call-needs-sign-in">
      <span className="small-text">{t("mcpCallNeedsSignIn", { server })}</span>
      <button
        type="button"
        className="small"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setProblem(null);
          api
            .mcpSignIn(server)
            .catch((error: unknown) => setProblem(errorMessage(error)))
            .finally(() => setBusy(false));
        }}
      >
        {t("mcpSignIn")}
      </button>
      {problem && <span className="small-text mcp-error">{problem}</span>}
    </div>
  );
}
