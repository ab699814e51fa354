// The search box of a list (the history, the snippets, the conversations): named for screen
// readers by its label, with an example of what to type.
import type { KeyboardEvent } from "react";

interface Props {
  className: string;
  label: string;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  onKeyDown?: (event: KeyboardEvent<HTMLInputElement>) => void;
}

export function SearchField({ className, label, placeholder, value, onChange, onKeyDown }: Props) {
  return <input type="search" className={className} aria-label={label} placeholder={placeholder} value={value} onChange={(event) => onChange(event.target.value)} onKeyDown={onKeyDown} />;
}
