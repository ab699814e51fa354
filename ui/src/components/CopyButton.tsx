import { useI18n } from "../i18n";
import { useCopy } from "./useCopy";

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useI18n();
  const { copied, copy } = useCopy();
  return (
    <button type="button" className="copy-button" onClick={() => void copy(text)} aria-label={`${t("copy")} ${label ?? ""}`.trim()}>
      {copied ? t("copied") : t("copy")}
    </button>
  );
}
