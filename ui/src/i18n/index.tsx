// A small, typed i18n layer: every key must exist in every language (the compiler checks zh
// against en), and strings take {named} placeholders.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { en, type MessageKey } from "./en";
import { zh } from "./zh";

export type Lang = "en" | "zh";
export const LANGS: Record<Lang, { label: string; messages: Record<MessageKey, string> }> = {
  en: { label: "English", messages: en },
  zh: { label: "简体中文", messages: zh },
};

const STORAGE_KEY = "tooltrail.lang";

export function detectLang(): Lang {
  try {
    const saved = localStorage.getItem(STORAGE_KEY);
    if (saved === "en" || saved === "zh") return saved;
  } catch {
    // Storage may be unavailable; fall back to the system language.
  }
  const languages = typeof navigator !== "undefined" ? navigator.languages ?? [navigator.language] : [];
  return languages.some((l) => l?.toLowerCase().startsWith("zh")) ? "zh" : "en";
}

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

export function translate(lang: Lang, key: MessageKey, vars?: Record<string, string | number>): string {
  const text = LANGS[lang].messages[key];
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

interface I18n {
  lang: Lang;
  setLang: (lang: Lang) => void;
  t: Translate;
}

const I18nContext = createContext<I18n>({ lang: "en", setLang: () => {}, t: (key, vars) => translate("en", key, vars) });

export function I18nProvider({ children, initial }: { children: ReactNode; initial?: Lang }) {
  const [lang, setLangState] = useState<Lang>(() => initial ?? detectLang());
  const setLang = useCallback((next: Lang) => {
    setLangState(next);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered; the choice still applies now.
    }
  }, []);
  const t = useCallback<Translate>((key, vars) => translate(lang, key, vars), [lang]);
  useEffect(() => {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  }, [lang]);
  const value = useMemo(() => ({ lang, setLang, t }), [lang, setLang, t]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  return useContext(I18nContext);
}
