// Reading the project's Markdown the way GitHub renders it: fenced blocks, heading anchors,
// links, and the shell commands of a block. Used by test/readme.test.ts to check the docs.

/** One fenced code block: its language (may be ''), its text and the line its fence opens on (1-based). */
export interface CodeBlock {
  lang: string;
  code: string;
  line: number;
}

/** A page split into its fenced blocks and the prose around them (fenced lines blanked, so line numbers hold). */
export function splitPage(text: string): { blocks: CodeBlock[]; prose: string } {
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  let open: { lang: string; line: number; lines: string[]; fence: string } | null = null;
  text.split('\n').forEach((line, i) => {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (open === null && fence) {
      open = { lang: fence[3]!, line: i + 1, lines: [], fence: fence[2]! };
      prose.push('');
    } else if (open !== null && line.trim().startsWith(open.fence) && line.trim().replace(/[`~]/g, '') === '') {
      blocks.push({ lang: open.lang, code: `${open.lines.join('\n')}\n`, line: open.line });
      open = null;
      prose.push('');
    } else if (open !== null) {
      open.lines.push(line);
      prose.push('');
    } else {
      prose.push(line);
    }
  });
  return { blocks, prose: prose.join('\n') };
}

/**
 * The anchors GitHub gives a page's headings: the heading's text (markup removed) lowercased,
 * punctuation dropped, spaces as hyphens; a repeated slug gets -1, -2, ...
 */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of splitPage(text).prose.split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingAnchor(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The anchor GitHub gives a heading (before duplicates are numbered): `## Single project` is `#single-project`. */
export function headingAnchor(markdown: string): string {
  return headingText(markdown)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's rendered text: links as their text, no code or emphasis marks. */
function headingText(markdown: string): string {
  return markdown.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
}

/** The links and images of a page's prose (not of its code), with the line each is on. */
export function pageLinks(text: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  splitPage(text)
    .prose.split('\n')
    .forEach((line, i) => {
      // Inline code may hold brackets and parentheses that are no link.
      const bare = line.replace(/`[^`]*`/g, '');
      for (const m of bare.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1]!, line: i + 1 });
    });
  return out;
}

/**
 * The `log-endpoints` command lines of a shell block, as the argument lists the CLI gets:
 * `npx log-endpoints <args>`, `log-endpoints <args>` and `npm start -- <args>` (the demo command),
 * after environment assignments, up to a pipe, a redirection or the next command. Variables are
 * replaced by a placeholder, quotes removed as the shell would.
 */
export function cliCommands(code: string): string[][] {
  const out: string[][] = [];
  for (const line of code.replace(/\\\n/g, ' ').split('\n')) {
    for (const command of splitCommands(line)) {
      const words = command.filter((w, i) => !(/^[A-Z_][A-Z0-9_]*=/.test(w) && command.slice(0, i).every((p) => /^[A-Z_][A-Z0-9_]*=/.test(p))));
      if (words[0] === 'npx' && words[1] === 'log-endpoints') out.push(words.slice(2));
      else if (words[0] === 'log-endpoints') out.push(words.slice(1));
      else if (words[0] === 'npm' && words[1] === 'start') out.push(['demo', ...words.slice(words[2] === '--' ? 3 : 2)]);
    }
  }
  return out;
}

/** The words of each command of one line (split at `&&`, `||`, `;`, `|`; cut at `>`, `<` and a comment). */
function splitCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  let word: string | null = null;
  let cut = false;
  const end = () => {
    if (word !== null && !cut) commands.at(-1)!.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      const inner = line.slice(i + 1, close === -1 ? line.length : close);
      word = (word ?? '') + (c === '"' ? expand(inner) : inner);
      i = close === -1 ? line.length : close;
    } else if (c === '$') {
      const name = /^\$(\{[^}]*\}|\w+)/.exec(line.slice(i));
      word = (word ?? '') + 'x';
      i += name ? name[0].length - 1 : 0;
    } else if (/\s/.test(c)) {
      end();
    } else if (c === '#' && word === null) {
      break;
    } else if ('&|;'.includes(c)) {
      end();
      while ('&|'.includes(line[i + 1] ?? '')) i++;
      commands.push([]);
      cut = false;
    } else if (c === '>' || c === '<') {
      end();
      cut = true;
    } else {
      word = (word ?? '') + c;
    }
  }
  end();
  return commands.filter((c) => c.length > 0);
}

/** Variables inside double quotes, as a placeholder. */
function expand(text: string): string {
  return text.replace(/\$(\{[^}]*\}|\w+)/g, 'x');
}
