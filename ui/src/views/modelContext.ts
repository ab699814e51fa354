// What each view last gave for the model (`ui/update-model-context`), until the next question
// takes it along as an attachment, the user removes it, or its view closes (for any reason:
// a closed view's context is forgotten, and a late update from it is not kept). Each update
// replaces the view's last.
import { useSyncExternalStore } from "react";
import type { ViewAttachmentSource } from "./types";

export interface ViewContext {
  viewId: string;
  server: string;
  tool: string;
  text: string;
}

let entries: ViewContext[] = [];
const listeners = new Set<() => void>();

function changed(next: ViewContext[]) {
  entries = next;
  for (const listener of listeners) listener();
}

/** Views closed in this window: their updates are not kept. */
const closed = new Set<string>();

/** Keeps `text` as the view's context for the next question; empty text drops it. */
export function setViewContext(viewId: string, server: string, tool: string, text: string) {
  if (closed.has(viewId)) return;
  const others = entries.filter((entry) => entry.viewId !== viewId);
  changed(text.length > 0 ? [...others, { viewId, server, tool, text }] : others);
}

export function removeViewContext(viewId: string) {
  if (entries.some((entry) => entry.viewId === viewId)) changed(entries.filter((entry) => entry.viewId !== viewId));
}

/** The view closed: its context goes, and nothing it sends later is kept. */
export function viewContextClosed(viewId: string) {
  closed.add(viewId);
  removeViewContext(viewId);
}

/** Forgets every view's context (another conversation is shown; its views were closed first,
 * and a closed view's bridge hears nothing more). */
export function clearViewContexts() {
  closed.clear();
  if (entries.length > 0) changed([]);
}

/** The contexts as attachments of the question being sent; they are gone afterwards. */
export function takeViewContexts(): ViewAttachmentSource[] {
  const taken = entries.map((entry): ViewAttachmentSource => ({ kind: "view", server: entry.server, tool: entry.tool, text: entry.text }));
  if (taken.length > 0) changed([]);
  return taken;
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useViewContexts(): ViewContext[] {
  return useSyncExternalStore(subscribe, () => entries);
}
