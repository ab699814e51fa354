// A question as the conversation shows it: the attachments the model got before it (in
// `<attachment-NONCE>` blocks, or `<attachment>` ones in messages recorded before the nonce) shown
// as chips with their names, not as their whole text.
import { useI18n } from "../../i18n";

// A block tagged with its message's nonce, which the engine checked no content holds: it ends at
// its own closing tag only, whatever other closing tags its text has.
const TAGGED = /^<attachment-([0-9a-f]+) name="([^"]*)" source="([^"]*)"(?: type="[^"]*")?>\n[\s\S]*?\n<\/attachment-\1>\n\n/;
// A block of a message recorded before blocks had a nonce.
const UNTAGGED = /^<attachment() name="([^"]*)" source="([^"]*)"(?: type="[^"]*")?>\n[\s\S]*?\n<\/attachment>\n\n/;

const unescape = (text: string) => text.replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&amp;", "&");

const block = (text: string) => TAGGED.exec(text) ?? UNTAGGED.exec(text);

/** The attachments' names and sources at the head of `text`, and the question after them. */
export function splitAttachments(text: string): { attached: { name: string; source: string }[]; question: string } {
  const attached: { name: string; source: string }[] = [];
  let rest = text;
  for (let found = block(rest); found; found = block(rest)) {
    attached.push({ name: unescape(found[2] ?? ""), source: unescape(found[3] ?? "") });
    rest = rest.slice(found[0].length);
  }
  return { attached, question: rest };
}

export function QuestionText({ text }: { text: string }) {
  const { t } = useI18n();
  const { attached, question } = splitAttachments(text);
  return (
    <>
      {attached.length > 0 && (
        <ul className="attach-chips question-attachments" aria-label={t("attachmentsLabel")}>
          {attached.map((item) => (
            <li key={item.source} className="attach-chip" title={item.source}>
              <span className="attach-name">{item.name}</span>
            </li>
          ))}
        </ul>
      )}
      {question}
    </>
  );
}
