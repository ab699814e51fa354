// One recommended model of the catalogue, as the first-run guide and Settings → Models show it.
import type { CatalogueModel } from "../../api";
import { useI18n } from "../../i18n";
import { formatBytes, formatTokens } from "./format";

/** The model's title, name, description and figures; `licence` adds its licence to them. */
export function CatalogueEntryMain({ entry, licence = false }: { entry: CatalogueModel; licence?: boolean }) {
  const { t } = useI18n();
  const figures = [
    entry.size_bytes !== null ? t("mdlSize", { size: formatBytes(entry.size_bytes) }) : null,
    t("mdlMemory", { memory: entry.memory_gb.toFixed(1) }),
    t("mdlTrained", { tokens: formatTokens(entry.context_length) }),
    licence ? t("mdlLicence", { licence: entry.licence }) : null,
  ];
  return (
    <div className="cfg-item-main">
      <div className="cfg-item-title">
        <strong>{entry.title}</strong>
        <code className="cfg-mono muted">{entry.name}</code>
        {entry.installed && <span className="cfg-badge cfg-badge-ok">{t("mdlInstalled")}</span>}
      </div>
      <span className="small-text">{entry.description}</span>
      <span className="muted small-text">{figures.filter(Boolean).join(" · ")}</span>
    </div>
  );
}
