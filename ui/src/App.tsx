import { Suspense, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, errorMessage, type AppInfo, type ConversationSummary, type GuideView, type McpOverview, type RecentWorkspace, type WorkspaceInfo } from "./api";
import { Chat } from "./components/Chat";
import { ChatBanner } from "./components/ChatBanner";
import { Composer } from "./components/Composer";
import { ContextMeter } from "./components/ContextMeter";
import { NoModelNotice } from "./components/NoModelNotice";
import { Sidebar } from "./components/Sidebar";
import { Timeline } from "./components/Timeline";
import { useTimelineMode } from "./components/timelineMode";
import { UpdateNotice } from "./components/updates/UpdateNotice";
import { Welcome } from "./components/Welcome";
import { HistoryView, ModelGuide, SettingsView, SnippetsView, StatsView } from "./components/lazy";
import { useI18n } from "./i18n";
import { stopListening } from "./listening";
import { useSession } from "./session";
import { ViewHostProvider, type ViewHost } from "./views/host";
import { clearViewContexts, takeViewContexts } from "./views/modelContext";
import { tearDownOpenViews } from "./views/openViews";
import type { Screen } from "./screen";
import { useWindowKeys } from "./windowKeys";

const NO_SERVERS: McpOverview = { servers: [] };

export function App() {
  const { t } = useI18n();
  const [info, setInfo] = useState<AppInfo | null>(null);
  // Whether a question could be answered now; the start screen becomes a guide when not.
  const [guide, setGuide] = useState<GuideView | null>(null);
  // The same check with a folder open: the notice above the composer says when nothing answers.
  const [modelCheck, setModelCheck] = useState<GuideView | null>(null);
  const [checkingModel, setCheckingModel] = useState(false);
  const noModel = useRef(false);
  const [workspace, setWorkspace] = useState<WorkspaceInfo | null>(null);
  const [recent, setRecent] = useState<RecentWorkspace[]>([]);
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  // Changed paths with the time they were reported; those after the last question count.
  const [changed, setChanged] = useState<ReadonlyMap<string, number>>(() => new Map());
  const [openError, setOpenError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [revealInTimeline, setRevealInTimeline] = useState(0);
  const [revealInChat, setRevealInChat] = useState(0);

  const [mcp, setMcp] = useState<McpOverview>(NO_SERVERS);
  const [screen, setScreen] = useState<Screen>("chat");
  const [timelineMode, setTimelineMode] = useTimelineMode();

  // Sets state only when the answer comes, so effects may call it.
  const loadModelCheck = useCallback(() => {
    api.modelGuide().then(
      (check) => {
        setModelCheck(check);
        setCheckingModel(false);
      },
      () => setCheckingModel(false),
    );
  }, []);
  const checkModelAgain = useCallback(() => {
    setCheckingModel(true);
    loadModelCheck();
  }, [loadModelCheck]);
  useEffect(() => {
    noModel.current = modelCheck !== null && !modelCheck.ready;
  }, [modelCheck]);

  const refreshConversations = useCallback(() => {
    api.listConversations().then(setConversations, () => {});
  }, []);
  const refreshServers = useCallback(() => {
    api.mcpServers().then(setMcp, () => {});
  }, []);
  // A turn may have started, restarted or lost an MCP server; and one that was answered while the
  // notice said nothing answers is reason to look again.
  const afterTurn = useCallback(() => {
    refreshConversations();
    refreshServers();
    if (noModel.current) loadModelCheck();
  }, [refreshConversations, refreshServers, loadModelCheck]);
  const session = useSession(afterTurn);
  const { reset } = session;

  // What views need of the window; a view's message is sent as the composer sends a question,
  // with the views' latest context for the model attached.
  const { busy, send, sawViewStart, claimViewStart, viewSink } = session;
  const conversationId = session.chat.conversationId;
  const viewHost = useMemo<ViewHost>(
    () => ({
      conversationId,
      version: info?.version ?? "",
      sawViewStart,
      claimViewStart,
      viewSink,
      ask: (text) => {
        if (busy) return false;
        send(text, takeViewContexts());
        return true;
      },
    }),
    [conversationId, info?.version, sawViewStart, claimViewStart, viewSink, busy, send],
  );
  // A view's context belongs to its conversation.
  useEffect(() => clearViewContexts(), [conversationId]);

  const enterWorkspace = useCallback(
    (opened: WorkspaceInfo | null) => {
      if (!opened) return;
      reset();
      setChanged(new Map());
      setSelected(null);
      setScreen("chat");
      setWorkspace(opened);
    },
    [reset],
  );

  // Whether the window knows its folder (or that it has none): its first screen is then built.
  const [started, setStarted] = useState(false);
  useEffect(() => {
    api.appInfo().then(setInfo, () => {});
    api
      .currentWorkspace()
      .then((opened) => {
        enterWorkspace(opened);
        // The start screen asks whether a question could be answered now (and looks for servers).
        if (!opened) api.modelGuide().then(setGuide, () => {});
      }, () => {})
      .finally(() => setStarted(true));
    api.recentWorkspaces().then(setRecent, () => {});
  }, [enterWorkspace]);
  // The window is created hidden and appears with its first screen (src-tauri/src/window.rs).
  useEffect(() => {
    if (started) api.windowReady().catch(() => {});
  }, [started]);

  useEffect(() => {
    if (!workspace) return;
    refreshConversations();
    refreshServers();
    // Whether a question could be answered, asked without waiting: the composer works meanwhile.
    loadModelCheck();
    api.recentWorkspaces().then(setRecent, () => {});
    const stopServers = stopListening(api.onMcpChanged(refreshServers));
    const stopFiles = stopListening(
      api.onFilesChanged((change) => {
        if (change.workspace !== workspace.path) return;
        const now = Date.now();
        setChanged((old) => {
          const next = new Map(old);
          for (const path of change.paths) next.set(path, now);
          return next;
        });
      }),
    );
    return () => {
      stopFiles();
      stopServers();
    };
  }, [workspace, refreshConversations, refreshServers, loadModelCheck]);

  useWindowKeys(session, setScreen);

  const openFolder = useCallback(
    (path?: string) => {
      setOpenError(null);
      api.openWorkspace(path).then(enterWorkspace, (error: unknown) => setOpenError(errorMessage(error)));
    },
    [enterWorkspace],
  );

  const { open } = session;
  // Open views are closed (told, and given their moment to answer) before another conversation
  // takes their place.
  const openConversation = useCallback(
    (id: string) => {
      setScreen("chat");
      tearDownOpenViews()
        .then(() => open(id))
        .catch((error: unknown) => setOpenError(errorMessage(error)));
    },
    [open],
  );
  // From the history: the conversation, scrolled to the call in both the chat and the timeline.
  const openCall = useCallback(
    (conversationId: string, callId: string) => {
      setScreen("chat");
      tearDownOpenViews()
        .then(() => open(conversationId))
        .then(
          () => {
            setSelected(callId);
            setRevealInChat((n) => n + 1);
            setRevealInTimeline((n) => n + 1);
          },
          (error: unknown) => setOpenError(errorMessage(error)),
        );
    },
    [open],
  );
  // Settings may change where questions go and which MCP servers run.
  const settingsChanged = useCallback(() => {
    api.appInfo().then(setInfo, () => {});
    refreshServers();
    // The start screen's guide keeps its own check; with a folder open, the notice looks again.
    if (workspace) loadModelCheck();
  }, [refreshServers, workspace, loadModelCheck]);

  const selectFromChat = useCallback((callId: string) => {
    setSelected(callId);
    setRevealInTimeline((n) => n + 1);
  }, []);
  const selectInTimeline = useCallback((callId: string) => setSelected(callId), []);
  const showInChat = useCallback((callId: string) => {
    setSelected(callId);
    setRevealInChat((n) => n + 1);
  }, []);

  const openGuide = useCallback(() => setScreen("guide"), []);

  const newConversation = () => {
    setScreen("chat");
    void tearDownOpenViews().then(() => session.reset());
  };

  // The update notice comes first and stays mounted from the start screen to a folder's, so
  // Not now and an install under way outlive the switch.
  if (!workspace) {
    return (
      <>
        <UpdateNotice />
        <Welcome info={info} guide={guide} recent={recent} error={openError} onOpenFolder={openFolder} onSettingsChanged={settingsChanged} />
      </>
    );
  }

  // A new question starts a new "since the last answer".
  const since = session.chat.turns.at(-1)?.startedMs ?? 0;
  const changedPaths = [...changed].filter(([, at]) => at >= since).map(([path]) => path);
  return (
    <>
    <UpdateNotice />
    <div className={screen === "chat" && timelineMode === "waterfall" ? "layout wide-timeline" : "layout"}>
      <Sidebar
        workspace={workspace}
        conversations={conversations}
        activeConversation={session.chat.conversationId}
        recent={recent}
        mcp={mcp}
        onOpenFolder={openFolder}
        onOpenConversation={openConversation}
        onNewConversation={newConversation}
        screen={screen}
        onScreen={setScreen}
        onConversationsChanged={refreshConversations}
      />
      {screen !== "chat" && (
        <Suspense fallback={<main className="page" aria-busy="true" />}>
          {screen === "history" && <HistoryView workspace={workspace} onOpenCall={openCall} />}
          {screen === "stats" && <StatsView workspace={workspace} />}
          {screen === "snippets" && <SnippetsView workspace={workspace} />}
          {screen === "settings" && <SettingsView workspace={workspace} onChanged={settingsChanged} />}
          {screen === "guide" && (
            <main className="page guide-page" aria-label={t("guideTitle")}>
              <ModelGuide onDone={() => setScreen("chat")} doneLabel="guideBack" onChanged={settingsChanged} ownPage />
            </main>
          )}
        </Suspense>
      )}
      {screen === "chat" && (
      <ViewHostProvider value={viewHost}>
      <main className="chat">
        {/* Every screen names itself with one h1; the chat's is read, not shown: the sidebar already marks it. */}
        <h1 className="sr-only">{t("navChat")}</h1>
        <ChatBanner changedPaths={changedPaths} openError={openError} />
        <Chat
          chat={session.chat}
          outgoing={session.outgoing}
          localWait={session.localWait}
          folder={workspace.name}
          selected={selected}
          reveal={revealInChat}
          onSelectCall={selectFromChat}
          onAnswer={session.answer}
          onAnswerQuestion={session.answerQuestion}
          changes={session.changes}
          onUndo={session.undo}
          onRetry={session.retry}
          onOpenGuide={openGuide}
        />
        <NoModelNotice guide={modelCheck} folder={workspace.name} checking={checkingModel} onChoose={openGuide} onCheckAgain={checkModelAgain} />
        <Composer folder={workspace.name} busy={session.busy} onSend={session.send} onStop={session.stop} status={<ContextMeter turns={session.chat.turns} />} />
      </main>
      <Timeline
        calls={session.chat.calls}
        timeline={session.chat.timeline}
        selected={selected}
        reveal={revealInTimeline}
        onSelect={selectInTimeline}
        onShowInChat={showInChat}
        mode={timelineMode}
        onMode={setTimelineMode}
        {...(timelineMode === "waterfall" ? { turns: session.chat.turns } : {})}
      />
      </ViewHostProvider>
      )}
    </div>
    </>
  );
}
