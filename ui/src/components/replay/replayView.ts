// Whether a replay's comparison shows its calls as a list or on a waterfall, remembered as the
// main timeline's choice is, under its own key.
import { useTimelineMode, type TimelineMode } from "../timelineMode";

export function useReplayView(): [TimelineMode, (mode: TimelineMode) => void] {
  return useTimelineMode("tooltrail.replayView");
}
