// The calls whose view is open now, oldest first, so the timeline keeps their cards mounted while
// they scroll out of sight (a card that unmounts tears its view down); and how to close each one
// properly (telling the view and waiting for its answer) before the window replaces what shows
// it, such as another conversation.
import { useSyncExternalStore } from "react";

let open: string[] = [];
const listeners = new Set<() => void>();

function changed(next: string[]) {
  open = next;
  for (const listener of listeners) listener();
}

export function viewOpened(callId: string) {
  changed([...open.filter((id) => id !== callId), callId]);
}

export function viewGone(callId: string) {
  if (open.includes(callId)) changed(open.filter((id) => id !== callId));
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useOpenViews(): string[] {
  return useSyncExternalStore(subscribe, () => open);
}

const closers = new Map<string, () => Promise<void>>();

/** Names how the open view of `callId` is closed; returns the call that forgets it. */
export function onTearDown(callId: string, close: () => Promise<void>): () => void {
  closers.set(callId, close);
  return () => {
    if (closers.get(callId) === close) closers.delete(callId);
  };
}

/**
 * Closes every open view as its Close button does: each is told (`ui/resource-teardown`) and
 * given its moment to answer (at most the bridge's wait). Resolves once all are closed.
 */
export function tearDownOpenViews(): Promise<void> {
  return Promise.all([...closers.values()].map((close) => close().catch(() => undefined))).then(() => undefined);
}
