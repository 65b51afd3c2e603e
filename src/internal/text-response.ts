/**
 * A `Response` with a string body that remembers the string, so the `./node` adapter can write it with
 * one `res.end(text)` instead of reading the web body stream back (`Readable.fromWeb` + `pipeline` per
 * answer). Web callers get an ordinary, complete `Response`.
 */

const texts = new WeakMap<Response, string>();

/**
 * `new Response(text, init)`, with `text` kept for {@link takeResponseText}.
 *
 * @example
 * ```ts
 * return textResponse(JSON.stringify(body), { status: 201, headers: JSON_HEADERS });
 * ```
 */
export function textResponse(text: string, init: ResponseInit): Response {
  const response = new Response(text, init);
  texts.set(response, text);
  return response;
}

/**
 * The string a {@link textResponse} was made with, once, while its web body is unread; else `undefined`
 * (then the body must be read from the stream).
 *
 * @example
 * ```ts
 * const text = takeResponseText(response);
 * if (text !== undefined) res.end(text);
 * ```
 */
export function takeResponseText(response: Response): string | undefined {
  const text = texts.get(response);
  if (text === undefined || response.bodyUsed || response.body?.locked) return undefined;
  texts.delete(response);
  return text;
}
