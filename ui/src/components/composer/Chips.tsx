// The attachments of the question being written, as chips above the text: name, size (or
// "reading…", or why it failed), "updated" when the server said it changed, and × to remove.
import type { Attachment, AttachmentSource } from "../../bindings";
import { useI18n } from "../../i18n";

export interface Chip {
  key: string;
  source: AttachmentSource;
  name: string;
  attachment?: Attachment;
  error?: string;
  updated?: boolean;
}

export function chipKey(source: AttachmentSource): string {
  switch (source.kind) {
    case "file":
      return `file:${source.path}`;
    case "resource":
      return `${source.server}:${source.uri}`;
    case "view":
      return `view:${source.server}:${source.tool}`;
  }
}

interface Props {
  chips: Chip[];
  onRemove: (key: string) => void;
}

export function Chips({ chips, onRemove }: Props) {
  const { t } = useI18n();
  if (chips.length === 0) return null;
  return (
    <ul className="attach-chips" aria-label={t("attachmentsLabel")} data-testid="attachments">
      {chips.map((chip) => {
        const content = chip.attachment?.content;
        const size = chip.error
          ? chip.error
          : !content
            ? t("attachmentReading")
            : content.type === "text"
              ? t("attachmentChars", { count: String([...content.text].length) })
              : t("attachmentBytes", { count: String(content.bytes) });
        const title = chip.source.kind === "file" ? chip.source.path : chip.source.kind === "resource" ? `${chip.source.server}: ${chip.source.uri}` : `${chip.source.server}: ${chip.source.tool}`;
        return (
          <li key={chip.key} className={chip.error ? "attach-chip failed" : "attach-chip"} title={title}>
            {chip.source.kind === "resource" && <span className="attach-server">{chip.source.server}:</span>}
            <span className="attach-name">{chip.name}</span>
            <span className="attach-size">{size}</span>
            {chip.updated && <span className="attach-updated">{t("attachmentUpdated")}</span>}
            <button type="button" className="attach-remove" aria-label={t("attachmentRemove", { name: chip.name })} onClick={() => onRemove(chip.key)}>
              ×
            </button>
          </li>
        );
      })}
    </ul>
  );
}
