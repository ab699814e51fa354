// Copying a text to the clipboard, and "copied" for a moment after, for the copy buttons.
import { useState } from "react";

/** How long a button says "copied" before it reads as a copy button again. */
const COPIED_MS = 1200;

export function useCopy(): { copied: boolean; copy: (text: string) => Promise<void> } {
  const [copied, setCopied] = useState(false);
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Fallback for webviews without the async clipboard.
      const area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), COPIED_MS);
  };
  return { copied, copy };
}
