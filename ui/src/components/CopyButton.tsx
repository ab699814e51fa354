import { useState } from "react";
import { useI18n } from "../i18n";

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Fallback for webviews without the async clipboard.
      const area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1200);
  };
  return (
    <button type="button" className="copy-button" onClick={() => void copy()} aria-label={`${t("copy")} ${label ?? ""}`.trim()}>
      {copied ? t("copied") : t("copy")}
    </button>
  );
}
