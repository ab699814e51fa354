// The heavy parts of the window, loaded when first shown rather than at start: the markdown
// renderer with its code highlighter, the diff view's highlighter, and the screens besides the
// chat. An empty window then parses and keeps only what it draws, which is most of what the
// web process holds at idle beyond WebKit's own floor.
import { lazy, Suspense } from "react";
import type { FileChange } from "../bindings";

const MarkdownNow = lazy(() => import("./Markdown").then((m) => ({ default: m.Markdown })));
const DiffViewNow = lazy(() => import("./DiffView").then((m) => ({ default: m.DiffView })));

/** Model output as markdown; until the renderer is loaded, the plain text. */
export function Markdown({ text }: { text: string }) {
  return (
    <Suspense fallback={<div className="md md-plain">{text}</div>}>
      <MarkdownNow text={text} />
    </Suspense>
  );
}

export function DiffView({ change }: { change: FileChange }) {
  return (
    <Suspense fallback={null}>
      <DiffViewNow change={change} />
    </Suspense>
  );
}

export const HistoryView = lazy(() => import("./history/HistoryView").then((m) => ({ default: m.HistoryView })));
export const StatsView = lazy(() => import("./history/StatsView").then((m) => ({ default: m.StatsView })));
export const SettingsView = lazy(() => import("./settings/SettingsView").then((m) => ({ default: m.SettingsView })));
export const ModelGuide = lazy(() => import("./models/ModelGuide").then((m) => ({ default: m.ModelGuide })));
export const SnippetsView = lazy(() => import("./snippets/SnippetsView").then((m) => ({ default: m.SnippetsView })));
