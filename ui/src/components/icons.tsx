// Small line icons drawn inline, in the text's colour, so that they show on every system: a
// glyph such as 🗑 depends on the fonts installed, and draws as an empty box where none has it.

interface IconProps {
  size?: number;
}

function Icon({ size = 14, children }: IconProps & { children: React.ReactNode }) {
  return (
    <svg className="icon" viewBox="0 0 16 16" width={size} height={size} fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

/** Delete: a bin with a lid. */
export function TrashIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <path d="M2.5 4h11" />
      <path d="M6.5 4V2.5h3V4" />
      <path d="M4 4l.7 9.5h6.6L12 4" />
      <path d="M6.8 6.5v4.5M9.2 6.5v4.5" />
    </Icon>
  );
}

/** Rename: a pencil. */
export function PencilIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <path d="M10.5 2.5l3 3L6 13H3v-3z" />
      <path d="M9 4l3 3" />
    </Icon>
  );
}
