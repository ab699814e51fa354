// Whether the calls show as a list of cards or on a waterfall, remembered across starts the way
// the language is (the window's local storage): the main timeline's choice, and a replay's
// comparison's under a key of its own.
import { useCallback, useState } from "react";

export type TimelineMode = "list" | "waterfall";

function saved(key: string): TimelineMode {
  try {
    return localStorage.getItem(key) === "waterfall" ? "waterfall" : "list";
  } catch {
    // Storage may be unavailable; the list is the default.
    return "list";
  }
}

/** The choice kept under `key` (the main timeline's by default), and how to change it. */
export function useTimelineMode(key = "tooltrail.timelineView"): [TimelineMode, (mode: TimelineMode) => void] {
  const [mode, setModeState] = useState<TimelineMode>(() => saved(key));
  const setMode = useCallback(
    (next: TimelineMode) => {
      setModeState(next);
      try {
        localStorage.setItem(key, next);
      } catch {
        // Not remembered; the choice still applies now.
      }
    },
    [key],
  );
  return [mode, setMode];
}
