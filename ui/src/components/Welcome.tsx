// The first screen: what Tooltrail does, which model endpoint it will use and how to change it,
// and the way in — open a folder, or one of the recent ones. When no model answers (a new
// machine), the endpoint's paragraph gives way to the guide to choosing one. An open folder's
// empty chat welcomes with the project instructions its conversations follow (AGENTS.md, ...),
// the folder's switch for them, and the files left out and why.
import { Suspense, useEffect, useState } from "react";
import { api, errorMessage, type AppInfo, type GuideView, type InstructionsView, type RecentWorkspace } from "../api";
import { useI18n } from "../i18n";
import { leftOutSentence } from "../state/instructions";
import { ModelGuide } from "./lazy";
import { LanguagePicker } from "./Sidebar";

interface Props {
  info: AppInfo | null;
  /** Whether a question could be answered now; `null` until known. */
  guide: GuideView | null;
  recent: RecentWorkspace[];
  error: string | null;
  onOpenFolder: (path?: string) => void;
  /** Where questions go changed (the guide chose something). */
  onSettingsChanged: () => void;
}

export function Welcome({ info, guide, recent, error, onOpenFolder, onSettingsChanged }: Props) {
  const { t } = useI18n();
  const endpoint = info?.endpoint;
  // Once shown, the guide stays: it says where questions go after a choice.
  const showGuide = guide !== null && !guide.ready;
  return (
    <main className="welcome">
      <div className="welcome-card">
        <h1>
          <Logo />
          {t("appName")}
        </h1>
        <h2>{t("welcomeTitle")}</h2>
        <p>{t("welcomeBody")}</p>
        {showGuide && (
          <Suspense fallback={<p className="muted" aria-busy="true">{t("guideChecking")}</p>}>
            <ModelGuide initial={guide} onDone={() => onOpenFolder()} doneLabel="guideOpenFolderNow" onChanged={onSettingsChanged} />
          </Suspense>
        )}
        <button type="button" className="primary big" onClick={() => onOpenFolder()}>
          {t("openFolder")}
        </button>
        {error && (
          <p className="turn-error" role="alert">
            {error}
          </p>
        )}
        <section className="welcome-section">
          <h3>{t("recentFolders")}</h3>
          {recent.length === 0 ? (
            <p className="muted">{t("noRecent")}</p>
          ) : (
            <ul className="recent-list">
              {recent.map((entry) => (
                <li key={entry.path}>
                  <button type="button" className="side-item" onClick={() => onOpenFolder(entry.path)}>
                    <span className="side-title">{entry.name}</span>
                    <span className="muted small-text">{entry.path}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
        {endpoint && !showGuide && (
          <section className="welcome-section endpoint" data-testid="endpoint">
            <h3>{t("endpointTitle")}</h3>
            <p>
              {t("endpointUsing", { url: endpoint.base_url })}
              <br />
              {endpoint.model ? t("endpointModel", { model: endpoint.model }) : t("endpointFirstModel")}
              <br />
              {endpoint.api_key_set ? t("endpointKeySet") : t("endpointKeyUnset")}
            </p>
            {endpoint.problem && <p className="turn-error">{t("endpointProblem", { problem: endpoint.problem })}</p>}
            <p className="muted small-text">{t("endpointChange", { path: endpoint.config_path })}</p>
          </section>
        )}
        <LanguagePicker />
      </div>
    </main>
  );
}

/** The app icon: a trail of three calls. */
function Logo() {
  return (
    <svg className="logo" viewBox="0 0 512 512" width="30" height="30" aria-hidden="true">
      <rect x="32" y="32" width="448" height="448" rx="96" fill="currentColor" />
      <path d="M150 360 L256 256 L362 152" stroke="white" strokeWidth="28" fill="none" />
      <circle cx="150" cy="360" r="40" fill="white" />
      <circle cx="256" cy="256" r="40" fill="white" />
      <circle cx="362" cy="152" r="40" fill="white" />
    </svg>
  );
}

/**
 * The open folder's project instructions: which file new conversations follow, with the
 * folder's switch, whether it is cut, and each file left out and why (a link out of the
 * folder is never followed); nothing when the folder has none. Looked for anew each time it
 * shows.
 */
export function InstructionsLine() {
  const { t } = useI18n();
  const [view, setView] = useState<InstructionsView | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api.projectInstructions().then(
      (found) => live && setView(found),
      (error: unknown) => live && setProblem(errorMessage(error)),
    );
    return () => {
      live = false;
    };
  }, []);
  if (problem) return <p className="turn-error small-text">{problem}</p>;
  if (!view) return null;
  // Turned off, nothing of the folder's is read: what would be left out does not matter.
  const leftOut = view.on ? view.left_out : [];
  if (!view.file && leftOut.length === 0) return null;
  const file = view.file;
  const toggle = () => {
    setProblem(null);
    api.setProjectInstructions(!view.on).then(setView, (error: unknown) => setProblem(errorMessage(error)));
  };
  return (
    <div className="instructions-line muted small-text" data-testid="project-instructions">
      {leftOut.map((entry) => (
        <p key={entry.file} className="instructions-left-out" data-testid="instructions-left-out">
          {leftOutSentence(t, entry)}
        </p>
      ))}
      {file && (
        <p>
          {t(view.on ? "instructionsOn" : "instructionsOff", { file })}{" "}
          {view.on && view.cut && (
            <>
              <span data-testid="instructions-cut">{t("instructionsCut", { file, limit: view.limit_kib })}</span>{" "}
            </>
          )}
          <button type="button" className="link-button" onClick={toggle}>
            {t(view.on ? "instructionsTurnOff" : "instructionsTurnOn")}
          </button>
        </p>
      )}
    </div>
  );
}
