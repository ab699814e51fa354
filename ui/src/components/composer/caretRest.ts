// The question box's caret rests, as a GTK text field's does. WebKitGTK blinks the caret of a
// focused field for as long as it has focus (it ignores GTK's gtk-cursor-blink-timeout, after
// which GTK's own fields stop blinking), and every blink draws a new frame of the window: with
// an answer on screen that kept an idle window at about 0.1 CPU-seconds every 10 s. So after
// REST_MS without a key, a click or a change in the box, and with no question running, the box
// gives up its focus; the next key pressed with nothing else focused gives it back before the
// key lands, so typing goes on where it was. Nothing is scheduled while the box rests or has no
// focus.
import { useEffect, type RefObject } from "react";

/** GTK's default gtk-cursor-blink-timeout. */
export const REST_MS = 10_000;

/** While `enabled`, the box `area` rests after REST_MS of focus without use. */
export function useCaretRest(area: RefObject<HTMLTextAreaElement | null>, enabled: boolean) {
  useEffect(() => {
    const box = area.current;
    if (!enabled || !box) return;
    let lastUse = performance.now();
    let timer: ReturnType<typeof setTimeout> | null = null;
    let resting = false;

    const stopTimer = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    };
    // One timer at a time: a use only moves `lastUse`, and the timer, when it fires early,
    // waits out the rest.
    const arm = (afterMs: number) => {
      if (timer === null) timer = setTimeout(check, afterMs);
    };
    const check = () => {
      timer = null;
      if (document.activeElement !== box) return;
      const left = REST_MS - (performance.now() - lastUse);
      if (left > 0) return arm(left);
      rest();
    };
    const rest = () => {
      resting = true;
      box.blur();
      window.addEventListener("keydown", wake, true);
      document.addEventListener("focusin", leaveRest, true);
      document.addEventListener("pointerdown", leaveRest, true);
    };
    // Focus or a click elsewhere ends the rest, as it would have taken the focus from the box:
    // text selected in the chat is then copied by Ctrl+C, not lost to the box.
    const leaveRest = () => {
      if (!resting) return;
      resting = false;
      window.removeEventListener("keydown", wake, true);
      document.removeEventListener("focusin", leaveRest, true);
      document.removeEventListener("pointerdown", leaveRest, true);
    };
    // A key with nothing else focused was meant for the box: it takes the focus back first, so
    // the key's own action (a letter typed, a new line) happens in it, and the box's own keys
    // (Enter sends, the arrows move in the list) are handed to it as if it had had the focus.
    const wake = (event: KeyboardEvent) => {
      const focused = document.activeElement;
      if (focused && focused !== document.body && focused !== document.documentElement) return leaveRest();
      const selection = document.getSelection();
      if (selection && !selection.isCollapsed) return leaveRest();
      box.focus();
      const { key, code, location, repeat, isComposing, shiftKey, ctrlKey, altKey, metaKey } = event;
      const again = new KeyboardEvent("keydown", { key, code, location, repeat, isComposing, shiftKey, ctrlKey, altKey, metaKey, bubbles: true, cancelable: true });
      if (!box.dispatchEvent(again)) event.preventDefault();
    };
    const touch = () => {
      lastUse = performance.now();
      if (document.activeElement === box) arm(REST_MS);
    };
    const onFocus = () => {
      leaveRest();
      touch();
    };

    box.addEventListener("focus", onFocus);
    box.addEventListener("blur", stopTimer);
    box.addEventListener("keydown", touch);
    box.addEventListener("pointerdown", touch);
    box.addEventListener("input", touch);
    if (document.activeElement === box) touch();
    return () => {
      stopTimer();
      leaveRest();
      box.removeEventListener("focus", onFocus);
      box.removeEventListener("blur", stopTimer);
      box.removeEventListener("keydown", touch);
      box.removeEventListener("pointerdown", touch);
      box.removeEventListener("input", touch);
    };
  }, [area, enabled]);
}
