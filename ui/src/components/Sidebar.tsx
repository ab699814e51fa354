// The open folder, its conversations, other recent folders, and the language.
import { memo, useState } from "react";
import type { Screen } from "../screen";
import type { ConversationSummary, McpOverview, McpServerView, RecentWorkspace, WorkspaceInfo } from "../api";
import { McpSignIn, signInAsked } from "./McpSignIn";
import { LANGS, useI18n, type Lang, type Translate } from "../i18n";
import { Conversations } from "./history/Conversations";

interface Props {
  workspace: WorkspaceInfo;
  conversations: ConversationSummary[];
  activeConversation: string | null;
  recent: RecentWorkspace[];
  mcp: McpOverview;
  onOpenFolder: (path?: string) => void;
  onOpenConversation: (id: string) => void;
  onNewConversation: () => void;
  screen: Screen;
  onScreen: (screen: Screen) => void;
  /** A conversation was renamed or deleted here. */
  onConversationsChanged: () => void;
}

const NAV: { screen: Screen; key: "navChat" | "navHistory" | "navStats" | "navSnippets" | "navSettings"; shortcut: string }[] = [
  { screen: "chat", key: "navChat", shortcut: "Ctrl+1" },
  { screen: "history", key: "navHistory", shortcut: "Ctrl+2" },
  { screen: "stats", key: "navStats", shortcut: "Ctrl+3" },
  { screen: "snippets", key: "navSnippets", shortcut: "Ctrl+4" },
  { screen: "settings", key: "navSettings", shortcut: "Ctrl+," },
];

export const Sidebar = memo(function Sidebar({ workspace, conversations, activeConversation, recent, mcp, onOpenFolder, onOpenConversation, onNewConversation, screen, onScreen, onConversationsChanged }: Props) {
  const { t } = useI18n();
  const others = recent.filter((entry) => entry.path !== workspace.path).slice(0, 5);
  return (
    <nav className="sidebar">
      <div className="workspace-head">
        <div className="workspace-name" title={workspace.path}>
          {workspace.name}
        </div>
        <div className="workspace-path muted" title={workspace.path}>
          {/* The mark keeps the path's leading slash in place while the start is cut off. */}
          {"\u200e" + workspace.path + "\u200e"}
        </div>
        <button type="button" onClick={() => onOpenFolder()}>
          {t("openFolder")}
        </button>
      </div>
      <div className="nav-tabs" role="tablist">
        {NAV.map((item) => (
          <button key={item.screen} type="button" role="tab" aria-selected={screen === item.screen} className={`nav-tab${screen === item.screen ? " active" : ""}`} title={item.shortcut} onClick={() => onScreen(item.screen)}>
            {t(item.key)}
          </button>
        ))}
      </div>
      <Conversations
        conversations={conversations}
        activeConversation={activeConversation}
        onOpenConversation={onOpenConversation}
        onNewConversation={onNewConversation}
        onConversationsChanged={onConversationsChanged}
      />
      {(mcp.servers.length > 0 || mcp.problem) && (
        <section className="side-section" data-testid="mcp-servers">
          <h2>{t("mcpServers")}</h2>
          {mcp.problem && <p className="turn-error small-text">{mcp.problem}</p>}
          <ul className="side-list">
            {mcp.servers.map((server) => (
              <li key={server.name} className={`mcp-server mcp-${server.state}`} title={[server.error, ...(server.stderr ?? [])].filter(Boolean).join("\n")}>
                <span className="mcp-dot" aria-hidden="true" />
                <span className="side-title">{server.name}</span>
                <span className="muted small-text">{serverState(t, server)}</span>
                {server.error && !signInAsked(server) && <span className="small-text mcp-error">{server.error}</span>}
                <McpSignIn server={server} />
              </li>
            ))}
          </ul>
        </section>
      )}
      {others.length > 0 && (
        <section className="side-section">
          <h2>{t("recentFolders")}</h2>
          <ul className="side-list">
            {others.map((entry) => (
              <li key={entry.path}>
                <button type="button" className="side-item" onClick={() => onOpenFolder(entry.path)} title={entry.path}>
                  <span className="side-title">{entry.name}</span>
                  <span className="muted small-text side-path">{entry.path}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <LanguagePicker />
    </nav>
  );
});

function serverState(t: Translate, server: McpServerView): string {
  switch (server.state) {
    case "running":
      return server.tools === 1 ? t("mcpRunningOne") : t("mcpRunning", { count: server.tools });
    case "idle":
      return t("mcpIdle");
    case "failed":
      return t("mcpFailed");
    case "disabled":
      return t("mcpDisabled");
    case "stopped":
      return t("mcpStopped");
  }
}

/** The language menu. Until it is reached (focus or pointer) it holds only the language in
 * use: the window then never lays out the other language's name, and an English window never
 * loads a Chinese font just to measure 简体中文. */
export function LanguagePicker() {
  const { t, lang, setLang } = useI18n();
  const [reached, setReached] = useState(false);
  const reach = () => setReached(true);
  const codes = reached ? (Object.keys(LANGS) as Lang[]) : [lang];
  return (
    <label className="language">
      <span className="muted small-text">{t("language")}</span>
      <select
        value={lang}
        onChange={(event) => setLang(event.target.value as Lang)}
        onFocus={reach}
        onPointerEnter={reach}
      >
        {codes.map((code) => (
          <option key={code} value={code}>
            {LANGS[code].label}
          </option>
        ))}
      </select>
    </label>
  );
}
