// Whether the timeline shows its list of cards or the waterfall, remembered across starts the
// way the language is (the window's local storage).
import { useCallback, useState } from "react";

export type TimelineMode = "list" | "waterfall";

const STORAGE_KEY = "tooltrail.timelineView";

function saved(): TimelineMode {
  try {
    return localStorage.getItem(STORAGE_KEY) === "waterfall" ? "waterfall" : "list";
  } catch {
    // Storage may be unavailable; the list is the default.
    return "list";
  }
}

export function useTimelineMode(): [TimelineMode, (mode: TimelineMode) => void] {
  const [mode, setModeState] = useState<TimelineMode>(saved);
  const setMode = useCallback((next: TimelineMode) => {
    setModeState(next);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered; the choice still applies now.
    }
  }, []);
  return [mode, setMode];
}
