// What a view's card needs from the window around it: the conversation, whether the call's
// view started live, where its turn's events go, and how a view's message becomes a question.
import { createContext, useContext, useEffect, useState } from "react";
import type { Event } from "../bindings";
import { currentTheme, type Theme } from "./hostContext";

export interface ViewHost {
  conversationId: string | null;
  /** Tooltrail's version, for the view's host info. */
  version: string;
  /** Whether this window saw the call start live: its view then opens by itself, once. */
  sawViewStart: (callId: string) => boolean;
  /** Takes that live start: true the first time only. */
  claimViewStart: (callId: string) => boolean;
  /** Where the events of a view turn opened now go. */
  viewSink: () => (event: Event) => void;
  /** Sends `text` as the user's question, as the composer does; false when a turn is running. */
  ask: (text: string) => boolean;
}

const ViewHostContext = createContext<ViewHost | null>(null);

export const ViewHostProvider = ViewHostContext.Provider;

/** The window around the views; null where none is (a card drawn on its own). */
export function useViewHost(): ViewHost | null {
  return useContext(ViewHostContext);
}

/** The app's theme, following the system's as it changes. */
export function useTheme(): Theme {
  const [theme, setTheme] = useState<Theme>(currentTheme);
  useEffect(() => {
    const query = window.matchMedia?.("(prefers-color-scheme: dark)");
    if (!query) return;
    const update = () => setTheme(currentTheme());
    query.addEventListener("change", update);
    return () => query.removeEventListener("change", update);
  }, []);
  return theme;
}
