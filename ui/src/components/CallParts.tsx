// The parts of a tool call's full view that the timeline card and the history's detail panel
// share: its arguments, its error, and its result text.
import { useState } from "react";
import type { ToolError } from "../bindings";
import { useI18n } from "../i18n";
import { CopyButton } from "./CopyButton";

/** Longest result drawn before "Show all": a huge result would make the view slow to open. */
const RESULT_PREVIEW = 20_000;

export function ArgumentsSection({ text }: { text: string }) {
  const { t } = useI18n();
  return (
    <div className="card-section">
      <div className="section-head">
        <span>{t("arguments")}</span>
        <CopyButton text={text} label={t("arguments")} />
      </div>
      <pre className="card-pre">{text}</pre>
    </div>
  );
}

export function ErrorSection({ error }: { error: ToolError }) {
  const { t } = useI18n();
  return (
    <div className="card-section">
      <div className="section-head">
        <span>{t("error")}</span>
      </div>
      <pre className="card-pre error-text">
        [{error.code}] {error.message}
      </pre>
    </div>
  );
}

/** The result, cut at its first characters until the user asks for all of it. */
export function ResultText({ result }: { result: string }) {
  const { t } = useI18n();
  const [showAll, setShowAll] = useState(false);
  const shown = showAll || result.length <= RESULT_PREVIEW ? result : result.slice(0, RESULT_PREVIEW);
  return (
    <>
      <pre className="card-pre">{shown}</pre>
      {shown.length < result.length && (
        <div className="card-note">
          {t("resultCut", { shown: shown.length, total: result.length })}{" "}
          <button type="button" className="link-button" onClick={() => setShowAll(true)}>
            {t("showAll")}
          </button>
        </div>
      )}
    </>
  );
}
