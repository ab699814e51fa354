// The first screen: what Tooltrail does, which model endpoint it will use and how to change it,
// and the way in — open a folder, or one of the recent ones.
import type { AppInfo, RecentWorkspace } from "../api";
import { useI18n } from "../i18n";
import { LanguagePicker } from "./Sidebar";

interface Props {
  info: AppInfo | null;
  recent: RecentWorkspace[];
  error: string | null;
  onOpenFolder: (path?: string) => void;
}

export function Welcome({ info, recent, error, onOpenFolder }: Props) {
  const { t } = useI18n();
  const endpoint = info?.endpoint;
  return (
    <main className="welcome">
      <div className="welcome-card">
        <h1>
          <span className="logo" aria-hidden>
            ⟋
          </span>{" "}
          {t("appName")}
        </h1>
        <h2>{t("welcomeTitle")}</h2>
        <p>{t("welcomeBody")}</p>
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
        {endpoint && (
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
