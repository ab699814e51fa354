// What a tool returned besides text, on its timeline card and in History: the images (click
// to see one full size) and sounds of an MCP result, which the record keeps whole in the call's
// data, and its structured content as a table.
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import type { JsonValue } from "../bindings";
import { useI18n } from "../i18n";
import { useEscape } from "./useEscape";

/** Types drawn as images. SVG is left out: it is a document, not a picture. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"]);
/** Types played as sound. */
const AUDIO_TYPES = new Set(["audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm", "audio/flac"]);

export interface MediaItem {
  kind: "image" | "audio";
  mimeType: string;
  /** Base64, as the tool sent it. */
  data: string;
}

type JsonObject = { [key: string]: JsonValue | undefined };

function asObject(value: JsonValue | undefined): JsonObject | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : null;
}

function text(value: JsonValue | undefined): string {
  return typeof value === "string" ? value : "";
}

/** The MCP result inside a call's data (`{server, tool, result}`), if it is one. */
function mcpResult(data: JsonValue | undefined): JsonObject | null {
  return asObject(asObject(data)?.result);
}

/** The images and sounds of a call's data, in the order the tool returned them. */
export function mediaOf(data: JsonValue | undefined): MediaItem[] {
  const content = mcpResult(data)?.content;
  if (!Array.isArray(content)) return [];
  const items: MediaItem[] = [];
  for (const entry of content) {
    const block = asObject(entry);
    if (!block) continue;
    const type = text(block.type);
    if (type === "image" || type === "audio") {
      const mimeType = text(block.mimeType).toLowerCase();
      const known = type === "image" ? IMAGE_TYPES.has(mimeType) : AUDIO_TYPES.has(mimeType);
      if (known && text(block.data)) items.push({ kind: type, mimeType, data: text(block.data) });
    } else if (type === "resource") {
      const resource = asObject(block.resource);
      const mimeType = text(resource?.mimeType).toLowerCase();
      if (IMAGE_TYPES.has(mimeType) && text(resource?.blob)) items.push({ kind: "image", mimeType, data: text(resource?.blob) });
    }
  }
  return items;
}

/** The structured content of a call's data, when it is an object or a list. */
export function structuredOf(data: JsonValue | undefined): JsonValue | null {
  const structured = mcpResult(data)?.structuredContent;
  return structured !== undefined && structured !== null && typeof structured === "object" ? structured : null;
}

function decodedSize(base64: string): number {
  return Math.floor((base64.replace(/=+$/, "").length * 3) / 4);
}

function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function dataUrl(item: MediaItem): string {
  return `data:${item.mimeType};base64,${item.data}`;
}

/** Thumbnails of the images (each opens full size) and players for the sounds. */
export function MediaStrip({ items, tool }: { items: MediaItem[]; tool: string }) {
  const { t } = useI18n();
  const [open, setOpen] = useState<number | null>(null);
  if (items.length === 0) return null;
  return (
    <div className="call-media" data-testid="call-media">
      {items.map((item, index) => {
        const vars = { n: index + 1, type: item.mimeType, size: humanSize(decodedSize(item.data)) };
        return item.kind === "image" ? (
          <button key={index} type="button" className="media-thumb" onClick={() => setOpen(index)} title={t("mediaEnlarge", vars)}>
            <img src={dataUrl(item)} alt={t("mediaImage", vars)} />
          </button>
        ) : (
          <figure key={index} className="media-audio">
            <audio controls preload="none" src={dataUrl(item)} aria-label={t("mediaAudio", vars)} />
            <figcaption className="small-text muted">{t("mediaAudio", vars)}</figcaption>
          </figure>
        );
      })}
      {open !== null && items[open] && <Lightbox item={items[open]} n={open + 1} tool={tool} onClose={() => setOpen(null)} />}
    </div>
  );
}

/** One image full size over the window; Esc, the button or a click beside it closes it. */
function Lightbox({ item, n, tool, onClose }: { item: MediaItem; n: number; tool: string; onClose: () => void }) {
  const { t } = useI18n();
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    close.current?.focus();
  }, [onClose]);
  // Esc closes the image, not the running turn or the panel behind it.
  useEscape(onClose);
  const label = t("mediaDialog", { n, tool });
  // Over the whole window: the timeline's panels clip what is drawn inside them.
  return createPortal(
    <div className="lightbox" role="dialog" aria-modal="true" aria-label={label} onClick={onClose}>
      <img src={dataUrl(item)} alt={label} onClick={(event) => event.stopPropagation()} />
      <button ref={close} type="button" className="lightbox-close" onClick={onClose}>
        {t("mediaClose")}
      </button>
    </div>,
    document.body,
  );
}

function cell(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Structured content as a table: an object's fields and values, or a list of objects by column. */
export function StructuredTable({ value }: { value: JsonValue }) {
  const { t } = useI18n();
  const rows = Array.isArray(value) ? value.map(asObject) : null;
  if (rows && rows.length > 0 && rows.every((row) => row !== null)) {
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row ?? {})))];
    return (
      <table className="structured-table" data-testid="structured-table">
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              {columns.map((column) => (
                <td key={column}>{cell(row?.[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  const object = asObject(value);
  const entries: [string, JsonValue | undefined][] = object ? Object.entries(object) : Array.isArray(value) ? value.map((item, index) => [String(index), item]) : [];
  return (
    <table className="structured-table" data-testid="structured-table">
      <thead>
        <tr>
          <th scope="col">{t("structuredField")}</th>
          <th scope="col">{t("structuredValue")}</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([key, item]) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            <td>{cell(item)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The structured content of a call's data as a section of its full view, when it has any. */
export function StructuredSection({ data }: { data: JsonValue | undefined }) {
  const { t } = useI18n();
  const structured = structuredOf(data);
  if (structured === null) return null;
  return (
    <div className="card-section">
      <div className="section-head">
        <span>{t("structuredSection")}</span>
      </div>
      <StructuredTable value={structured} />
    </div>
  );
}
