// A newer version as the user decides on it: which one, when it was published, what is new
// (the release notes, drawn by the same Markdown view as answers: no raw HTML, no links that
// navigate, no images loaded), and Install and restart or Not now. While it installs, a bar
// and the step in words; a refusal is read out as the backend's sentence, with Try again.
// Shown by the start-up notice and by Settings → Updates.
import "./updates.css";
import { useId, type Ref } from "react";
import type { UpdateInfo, UpdateProgress } from "../../api";
import { useI18n, type Lang, type Translate } from "../../i18n";
import { Markdown } from "../lazyRenderers";
import { formatBytes } from "../models/format";
import type { Install } from "./useInstall";

interface Props {
  update: UpdateInfo;
  install: Install;
  /** Hides the offer for now (Not now, or Close after a failure). */
  onLater: () => void;
  /** The level of the offer's heading in the page around it. */
  level: 2 | 3;
  className: string;
  ref?: Ref<HTMLElement>;
}

/** The step in words, for the line under the bar. */
export function progressLine(progress: UpdateProgress | null, t: Translate): string {
  if (progress === null) return t("updStarting");
  switch (progress.kind) {
    case "downloading":
      return progress.total ? t("updDownloading", { done: formatBytes(progress.downloaded), total: formatBytes(progress.total) }) : t("updDownloadingNoTotal", { done: formatBytes(progress.downloaded) });
    case "verifying":
      return t("updVerifying");
    case "installing":
      return t("updInstallingStep");
    case "restarting":
      return t("updRestarting");
  }
}

/** Percent downloaded, when the size is known; null while the step has no measure. */
export function progressPercent(progress: UpdateProgress | null): number | null {
  if (progress === null) return null;
  switch (progress.kind) {
    case "downloading":
      return progress.total ? Math.min(100, (progress.downloaded / progress.total) * 100) : null;
    case "verifying":
    case "installing":
    case "restarting":
      return null;
  }
}

/** The publication date as the reader's language writes it; null when the server's is not a date. */
export function publishedOn(date: string | null, lang: Lang): string | null {
  if (!date) return null;
  const at = new Date(date);
  if (Number.isNaN(at.getTime())) return null;
  return at.toLocaleDateString(lang === "zh" ? "zh-CN" : "en-US", { year: "numeric", month: "long", day: "numeric" });
}

export function UpdateOffer({ update, install, onLater, level, className, ref }: Props) {
  const { t, lang } = useI18n();
  const id = useId();
  const titleId = `${id}-title`;
  const notesId = `${id}-notes`;
  const lineId = `${id}-line`;
  const { state, start } = install;
  const installing = state.step === "installing";
  const published = publishedOn(update.date, lang);
  const Title = level === 2 ? "h2" : "h3";
  const Subtitle = level === 2 ? "h3" : "h4";
  const notes = update.notes?.trim();
  const percent = installing ? progressPercent(state.progress) : null;
  return (
    <section ref={ref} className={`update-offer ${className}`} aria-labelledby={titleId} data-testid="update-offer">
      <Title id={titleId} className="update-title">
        {t("updAvailable", { version: update.version })}
      </Title>
      <p className="update-facts">
        {t("updYouHave", { current: update.current_version })}
        {published && (
          <>
            {" "}
            <time dateTime={update.date ?? undefined}>{t("updPublished", { date: published })}</time>
          </>
        )}
      </p>
      <Subtitle id={notesId} className="update-notes-title">
        {t("updWhatsNew")}
      </Subtitle>
      {/* Long notes scroll here, so the buttons below stay in view; focusable for the keyboard. */}
      <div className="update-notes" role="group" aria-labelledby={notesId} tabIndex={0} data-testid="update-notes">
        {notes ? <Markdown text={notes} /> : <p className="muted">{t("updNoNotes")}</p>}
      </div>
      {installing && (
        <div className="update-progress">
          <progress className="update-bar" max={100} {...(percent === null ? {} : { value: percent })} aria-label={t("updProgressLabel", { version: update.version })} aria-describedby={lineId} />
          <p id={lineId} className="update-line" role="status" data-testid="update-step">
            {progressLine(state.progress, t)}
          </p>
        </div>
      )}
      {state.step === "failed" && (
        <p className="turn-error update-error" role="alert" data-testid="update-error">
          {state.message}
        </p>
      )}
      <div className="update-actions">
        {/* Stays in place while installing (not disabled, which would drop the keyboard's focus). */}
        <button type="button" className="primary" onClick={installing ? undefined : start} aria-disabled={installing} data-testid="update-install">
          {installing ? t("updInstalling") : state.step === "failed" ? t("updTryAgain") : t("updInstall")}
        </button>
        {!installing && (
          <button type="button" onClick={onLater}>
            {state.step === "failed" ? t("updClose") : t("updNotNow")}
          </button>
        )}
      </div>
    </section>
  );
}
