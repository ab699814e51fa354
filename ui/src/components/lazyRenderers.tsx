// The heavy renderers inside the window's parts, loaded when first shown rather than at start:
// the markdown renderer with its code highlighter, and the diff view's highlighter. Kept apart
// from the lazily loaded screens (lazy.tsx) because screens use them: a module holding both is
// imported by a screen it loads, a circle.
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
