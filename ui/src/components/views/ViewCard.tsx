// A call's MCP App view inside its timeline card: the strip that marks what follows as the
// server's content (always outside the frame, drawn by Tooltrail), the permission prompt, the
// frame itself, and why the view closed. A call seen starting live opens its view by itself;
// one from a reopened conversation waits for "Show view".
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { api, errorMessage } from "../../api";
import { useI18n, type Translate } from "../../i18n";
import type { CallView } from "../../state/chat";
import { useViewHost, type ViewHost } from "../../views/host";
import type { HostDisplayMode } from "../../views/hostContext";
import type { ViewEnd, ViewPlan, ViewStart } from "../../views/types";
import { viewContextClosed } from "../../views/modelContext";
import { onTearDown } from "../../views/openViews";
import { ViewFrame, type FrameHandle } from "./ViewFrame";

type Stage =
  | { kind: "idle"; ended?: ViewEnd; error?: string }
  | { kind: "preparing" }
  | { kind: "asking"; plan: ViewPlan }
  | { kind: "starting"; plan: ViewPlan }
  | { kind: "open"; plan: ViewPlan; start: ViewStart; granted: string[] };

function permissionsText(t: Translate, permissions: string[]): string {
  return permissions
    .map((name) => (name === "camera" || name === "microphone" || name === "geolocation" || name === "clipboard-write" ? t(`viewPermission_${name}`) : name))
    .join(", ");
}

export function ViewCard({ call }: { call: CallView }) {
  const host = useViewHost();
  if (!host || !call.view) return null;
  return <ViewCardIn call={call} host={host} uri={call.view.resource_uri} />;
}

function ViewCardIn({ call, host, uri }: { call: CallView; host: ViewHost; uri: string }) {
  const { t } = useI18n();
  // A card first mounted for a call seen starting live opens its view by itself.
  const [auto] = useState(() => host.sawViewStart(call.callId));
  const [stage, setStage] = useState<Stage>(auto ? { kind: "preparing" } : { kind: "idle" });
  const [mode, setMode] = useState<HostDisplayMode>("inline");
  const frame = useRef<FrameHandle>(null);
  // Kept in step before effects and events read it (a passive effect could run late).
  const stageRef = useRef(stage);
  useLayoutEffect(() => {
    stageRef.current = stage;
  });
  // A live call's server is known once its view's plan is, before the call starts.
  const server = call.server ?? ("plan" in stage ? stage.plan.server : "");

  const start = useCallback(
    (plan: ViewPlan, granted: string[]) => {
      setStage({ kind: "starting", plan });
      api.startView(plan.view_id, granted, host.viewSink()).then(
        (started) => setStage({ kind: "open", plan, start: started, granted }),
        (error: unknown) => setStage({ kind: "idle", error: errorMessage(error) }),
      );
    },
    [host],
  );

  /** Asks for the view's plan; the stage says "preparing" already. */
  const plan = useCallback(() => {
    const conversation = host.conversationId;
    const asked: Promise<ViewPlan | null> = conversation ? api.prepareView(conversation, call.turnId, call.callId) : Promise.resolve(null);
    return asked.then(
      (plan) => {
        if (!plan) setStage({ kind: "idle" });
        else if (plan.permissions.length > 0) setStage({ kind: "asking", plan });
        else start(plan, []);
      },
      (error: unknown) => setStage({ kind: "idle", error: errorMessage(error) }),
    );
  }, [host.conversationId, call.turnId, call.callId, start]);

  const prepare = () => {
    setStage({ kind: "preparing" });
    void plan();
  };

  // A live call's view opens by itself, once: a card mounted again later waits for Show view.
  const autoDone = useRef(false);
  useEffect(() => {
    if (!auto || autoDone.current) return;
    autoDone.current = true;
    // Taken by another card of the same call meanwhile: this one waits for Show view.
    if (host.claimViewStart(call.callId)) void plan();
    else void Promise.resolve().then(() => setStage({ kind: "idle" }));
  }, [auto, host, call.callId, plan]);

  // The views already closed on the record: each is closed once, with the first reason.
  const closed = useRef(new Set<string>());
  const closeOnRecord = useCallback((viewId: string, reason: ViewEnd) => {
    // Whatever closed it, what the view gave for the model goes with it.
    viewContextClosed(viewId);
    if (closed.current.has(viewId)) return;
    closed.current.add(viewId);
    void api.closeView(viewId, reason).catch(() => {});
  }, []);

  /** Ends the open view: the frame has gone or is going, and the record is told why. */
  const end = useCallback(
    (reason: ViewEnd) => {
      const now = stageRef.current;
      if (now.kind !== "open") return;
      setMode("inline");
      setStage({ kind: "idle", ...(reason === "closed" ? {} : { ended: reason }) });
      closeOnRecord(now.plan.view_id, reason);
    },
    [closeOnRecord],
  );

  // Closed by the host (a flood of requests, its server gone): the frame goes too.
  const hostEnd = stage.kind === "open" && call.viewId === stage.plan.view_id ? call.viewEnd : undefined;
  useEffect(() => {
    if (hostEnd) end(hostEnd);
  }, [hostEnd, end]);

  // The view is told first and given its moment to answer; then the frame goes.
  const close = useCallback(() => {
    const handle = frame.current;
    return (handle ? handle.teardown("closed") : Promise.resolve()).then(() => end("closed"));
  }, [end]);

  // Another conversation about to show, or a new one: the view is closed as by Close first.
  const isOpen = stage.kind === "open";
  useLayoutEffect(() => (isOpen ? onTearDown(call.callId, close) : undefined), [isOpen, call.callId, close]);

  // The window closing: the view is told, and the record says the app closed it.
  useEffect(() => {
    const unload = () => {
      const now = stageRef.current;
      if (now.kind !== "open") return;
      void frame.current?.teardown("closed");
      closeOnRecord(now.plan.view_id, "app_closed");
    };
    window.addEventListener("pagehide", unload);
    return () => window.removeEventListener("pagehide", unload);
  }, [closeOnRecord]);

  // Esc leaves full screen.
  useEffect(() => {
    if (mode !== "fullscreen") return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      event.stopPropagation();
      setMode("inline");
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [mode]);

  const open = stage.kind === "open";
  const fullscreen = open && mode === "fullscreen";
  return (
    <section className={`view-card${fullscreen ? " fullscreen" : ""}`} aria-label={t("viewLabel", { server, uri })} data-testid="view-card">
      <div className="view-strip">
        <span className="view-strip-label">{t("viewLabel", { server, uri })}</span>
        <span className="view-strip-actions">
          {fullscreen && (
            <button type="button" onClick={() => setMode("inline")}>
              {t("viewFullscreenExit")}
            </button>
          )}
          {open ? (
            <button type="button" onClick={() => void close()}>
              {t("viewClose")}
            </button>
          ) : stage.kind === "idle" && host.conversationId ? (
            <button type="button" onClick={prepare}>
              {t("viewShow")}
            </button>
          ) : null}
        </span>
      </div>
      {(stage.kind === "preparing" || stage.kind === "starting") && <p className="view-note muted">{t("viewOpening")}</p>}
      {stage.kind === "idle" && stage.error && (
        <p className="view-note view-error" role="alert">
          {t("viewFailed", { message: stage.error })}
        </p>
      )}
      {stage.kind === "idle" && stage.ended && (
        <p className="view-note" role="status">
          {t(`viewEnded_${stage.ended}`)}
        </p>
      )}
      {stage.kind === "asking" && (
        <div className="view-bar" role="group" aria-label={t("viewPermissionAsk", { features: permissionsText(t, stage.plan.permissions) })}>
          <span className="view-bar-text">{t("viewPermissionAsk", { features: permissionsText(t, stage.plan.permissions) })}</span>
          <span className="view-bar-actions">
            <button type="button" className="primary" onClick={() => start(stage.plan, stage.plan.permissions)}>
              {t("viewPermissionAllow")}
            </button>
            <button type="button" onClick={() => start(stage.plan, [])}>
              {t("viewPermissionNotNow")}
            </button>
          </span>
        </div>
      )}
      {open && stage.start.refused_domains.length > 0 && <p className="view-note muted">{t("viewRefusedDomains", { domains: stage.start.refused_domains.join(", ") })}</p>}
      {open && (
        <ViewFrame
          call={call}
          plan={stage.plan}
          start={stage.start}
          granted={stage.granted}
          host={host}
          mode={mode}
          onMode={setMode}
          onEnd={end}
          onRequestClose={() => void close()}
          // The card scrolled out, another conversation shown: closed once the view answered.
          onGone={(done) => {
            const viewId = stage.plan.view_id;
            void done.then(() => closeOnRecord(viewId, "closed"));
          }}
          handle={frame}
        />
      )}
    </section>
  );
}
