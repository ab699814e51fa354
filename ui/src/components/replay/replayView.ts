// Whether a replay's comparison shows its calls as a list or on a waterfall, remembered across
// starts the way the main timeline's choice is (the window's local storage), under its own key.
import { useCallback, useState } from "react";
import type { TimelineMode } from "../timelineMode";

const STORAGE_KEY = "tooltrail.replayView";

function saved(): TimelineMode {
  try {
    return localStorage.getItem(STORAGE_KEY) === "waterfall" ? "waterfall" : "list";
  } catch {
    // Storage may be unavailable; the list is the default.
    return "list";
  }
}

export function useReplayView(): [TimelineMode, (mode: TimelineMode) => void] {
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
