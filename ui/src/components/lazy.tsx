// The screens besides the chat, loaded when first shown rather than at start (and the heavy
// renderers inside them, in lazyRenderers.tsx). An empty window then parses and keeps only
// what it draws, which is most of what the web process holds at idle beyond WebKit's own floor.
import { lazy } from "react";

export const HistoryView = lazy(() => import("./history/HistoryView").then((m) => ({ default: m.HistoryView })));
export const StatsView = lazy(() => import("./history/StatsView").then((m) => ({ default: m.StatsView })));
export const SettingsView = lazy(() => import("./settings/SettingsView").then((m) => ({ default: m.SettingsView })));
export const ModelGuide = lazy(() => import("./models/ModelGuide").then((m) => ({ default: m.ModelGuide })));
export const SnippetsView = lazy(() => import("./snippets/SnippetsView").then((m) => ({ default: m.SnippetsView })));
