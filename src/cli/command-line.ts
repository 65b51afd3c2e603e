/**
 * Splits a command line into words the way a POSIX shell would for simple cases: whitespace
 * separates words, single quotes keep everything literal, double quotes keep spaces (with `\"` and
 * `\\` escapes), a backslash outside quotes escapes the next character. No expansions.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in ${JSON.stringify(line)}`);
  if (inWord) words.push(word);
  return words;
}
