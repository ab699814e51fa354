// The small form a prompt with arguments opens in the composer: one field per argument (the
// required ones marked), the server's suggestions for the field being filled (asked for as it
// is typed, knowing the fields already filled), Insert and Cancel.
import { useEffect, useRef, useState } from "react";
import type { PromptItem } from "../../bindings";
import { api, errorMessage } from "../../api";
import { useI18n } from "../../i18n";

interface Props {
  prompt: PromptItem;
  onInsert: (values: Record<string, string>) => Promise<void>;
  onCancel: () => void;
}

export function PromptForm({ prompt, onInsert, onCancel }: Props) {
  const { t } = useI18n();
  const [values, setValues] = useState<Record<string, string>>({});
  const [focused, setFocused] = useState<string | null>(prompt.arguments[0]?.name ?? null);
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const title = prompt.title ?? prompt.name;

  useEffect(() => {
    first.current?.focus();
  }, []);

  // Ask the server for the focused field's completions whenever it or an earlier value changes.
  useEffect(() => {
    if (!focused) return;
    let live = true;
    const filled = Object.fromEntries(Object.entries(values).filter(([name, value]) => name !== focused && value));
    const timer = setTimeout(() => {
      api
        .completePromptArgument(prompt.server, prompt.name, focused, values[focused] ?? "", filled)
        .then((found) => live && setSuggestions(found.slice(0, 8)))
        .catch(() => live && setSuggestions([]));
    }, 120);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [focused, values, prompt.server, prompt.name]);

  const missing = prompt.arguments.some((argument) => argument.required && !values[argument.name]?.trim());

  const insert = async () => {
    if (missing || busy) return;
    setBusy(true);
    setError(null);
    try {
      await onInsert(values);
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  return (
    <div
      className="prompt-form"
      role="group"
      aria-label={t("promptFormLabel", { prompt: title })}
      data-testid="prompt-form"
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation();
          onCancel();
        }
      }}
    >
      <div className="prompt-form-title">
        <strong>/{prompt.name}</strong> <span className="muted">{prompt.server}</span>
        {prompt.description && <p className="muted">{prompt.description}</p>}
      </div>
      {prompt.arguments.map((argument, index) => {
        const id = `prompt-arg-${argument.name}`;
        return (
          <div key={argument.name} className="prompt-field">
            <label htmlFor={id}>
              {argument.title ?? argument.name}
              {argument.required && <span className="prompt-required"> ({t("promptRequired")})</span>}
            </label>
            <input
              id={id}
              ref={index === 0 ? first : undefined}
              value={values[argument.name] ?? ""}
              aria-required={argument.required}
              placeholder={argument.description ?? ""}
              autoComplete="off"
              onFocus={() => setFocused(argument.name)}
              onChange={(event) => setValues((old) => ({ ...old, [argument.name]: event.target.value }))}
              onKeyDown={(event) => {
                if (event.key === "Enter") {
                  event.preventDefault();
                  void insert();
                }
              }}
            />
            {focused === argument.name && suggestions.length > 0 && (
              <ul className="prompt-suggestions" aria-label={t("promptSuggestions", { name: argument.title ?? argument.name })}>
                {suggestions.map((value) => (
                  <li key={value}>
                    <button type="button" onClick={() => setValues((old) => ({ ...old, [argument.name]: value }))}>
                      {value}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </div>
        );
      })}
      {error && (
        <p className="prompt-error" role="alert">
          {error}
        </p>
      )}
      <div className="prompt-actions">
        <button type="button" className="primary" disabled={missing || busy} onClick={() => void insert()}>
          {t("promptInsert")}
        </button>
        <button type="button" onClick={onCancel}>
          {t("promptCancel")}
        </button>
      </div>
    </div>
  );
}
