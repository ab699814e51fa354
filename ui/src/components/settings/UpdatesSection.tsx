// Settings → Updates: whether Tooltrail looks for a new version when it starts (saved at once),
// the version running, and Check now, which says it is up to date or offers the newer one the
// way the start-up notice does.
import { useEffect, useState } from "react";
import { api, errorMessage, type UpdateInfo, type UpdateSettings } from "../../api";
import { useI18n } from "../../i18n";
import { UpdateOffer } from "../updates/UpdateOffer";
import { useInstall } from "../updates/useInstall";
import { Failure, Notice, NotSaved, Switch } from "./Field";

type Check = { state: "idle" } | { state: "checking" } | { state: "current"; version: string } | { state: "found"; update: UpdateInfo } | { state: "failed"; message: string };

function UpdatesForm({ view, onSaved }: { view: UpdateSettings; onSaved: (view: UpdateSettings) => void }) {
  const { t } = useI18n();
  // Shown as asked at once; put back if it could not be saved.
  const [checkAtStart, setCheckAtStart] = useState(view.check_at_start);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [check, setCheck] = useState<Check>({ state: "idle" });
  const install = useInstall();

  const toggle = (on: boolean) => {
    setCheckAtStart(on);
    setSaveError(null);
    api.saveUpdateCheck(on).then(
      (saved) => {
        setCheckAtStart(saved.check_at_start);
        onSaved(saved);
      },
      (failure: unknown) => {
        setCheckAtStart(!on);
        setSaveError(errorMessage(failure));
      },
    );
  };

  const checkNow = () => {
    setCheck({ state: "checking" });
    api.checkForUpdate(false).then(
      (found) => setCheck(found ? { state: "found", update: found } : { state: "current", version: view.current_version }),
      (failure: unknown) => setCheck({ state: "failed", message: errorMessage(failure) }),
    );
  };
  const checking = check.state === "checking";

  return (
    <div className="cfg-form cfg-form-plain" data-testid="cfg-updates">
      <Switch checked={checkAtStart} onChange={toggle} testId="cfg-updates-at-start">
        {t("cfgUpdatesCheckAtStart")}
      </Switch>
      <NotSaved error={saveError} />
      <p className="muted small-text" data-testid="cfg-updates-version">
        {t("cfgUpdatesCurrent", { version: view.current_version })}
      </p>
      <div className="cfg-actions">
        {/* Not disabled while it checks: a disabled button would drop the keyboard's focus. */}
        <button type="button" onClick={checking ? undefined : checkNow} aria-disabled={checking} aria-busy={checking} data-testid="cfg-updates-check">
          {checking ? t("cfgUpdatesChecking") : t("cfgUpdatesCheckNow")}
        </button>
      </div>
      <Notice message={check.state === "current" ? t("cfgUpdatesUpToDate", { version: check.version }) : null} />
      <Failure message={check.state === "failed" ? t("cfgUpdatesCheckFailed", { message: check.message }) : null} />
      {check.state === "found" && <UpdateOffer update={check.update} install={install} onLater={() => setCheck({ state: "idle" })} level={3} className="update-in-settings" />}
    </div>
  );
}

export function UpdatesSection() {
  const { t } = useI18n();
  const [view, setView] = useState<UpdateSettings | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.updateSettings().then(setView, (failure: unknown) => setError(errorMessage(failure)));
  }, []);
  if (error) return <p className="turn-error">{t("cfgLoadFailed", { message: error })}</p>;
  if (!view) return <p className="muted">{t("cfgLoading")}</p>;
  return <UpdatesForm view={view} onSaved={setView} />;
}
