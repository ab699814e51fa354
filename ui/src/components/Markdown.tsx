// Model output as markdown, block by block. Raw HTML in the text is dropped (skipHtml), links do
// not navigate the app's window, and images are shown as their description: nothing the model
// writes can run code or load anything.
import { memo, useMemo, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
import remarkGfm from "remark-gfm";
import { splitBlocks } from "./markdown";

const components: Components = {
  a: ({ children, href }) => (
    <span className="md-link" title={href}>
      {children}
    </span>
  ),
  img: ({ alt }) => <span className="md-image">[{alt}]</span>,
};

const remarkPlugins = [remarkGfm];
// react-markdown builds its pipeline anew at every render, and rehype-highlight makes a new
// highlighter at every build, registering some forty languages (about 4 ms): while an answer
// streams, every piece of text paid for it. One highlighter serves every render instead.
const highlight = rehypeHighlight({ detect: false });
const rehypeHighlightOnce = () => highlight;
const rehypePlugins = [rehypeHighlightOnce];

const Block = memo(function Block({ source }: { source: string }): ReactNode {
  return (
    <ReactMarkdown
      skipHtml
      remarkPlugins={remarkPlugins}
      rehypePlugins={rehypePlugins}
      components={components}
    >
      {source}
    </ReactMarkdown>
  );
});

export function Markdown({ text }: { text: string }) {
  const blocks = useMemo(() => splitBlocks(text), [text]);
  return (
    <div className="md">
      {blocks.map((block, i) => (
        <Block key={i} source={block} />
      ))}
    </div>
  );
}
