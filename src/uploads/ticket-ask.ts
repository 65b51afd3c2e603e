/**
 * What an upload ticket asks of the person — the request text, the wanted file types, how many
 * files — checked and turned into the claims the upload page reads (`UPLOAD_PAGE_CLAIMS`).
 */
import * as z from "zod/v4";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { TICKET_CLAIMS, UPLOAD_PAGE_CLAIMS } from "./upload-handle.js";

/**
 * What a ticket asks for, shown by the upload page.
 *
 * @example
 * ```ts
 * const ask: TicketAsk = { message: "The sales figures (CSV)", accept: [".csv", "text/csv"], maxFiles: 1 };
 * await uploads.createTicket(scope, ask);
 * ```
 */
export interface TicketAsk {
  /** Request text shown on the upload page, 1 to 1024 characters. @default none */
  message?: string;
  /** Media types or extensions the page's picker offers (`".csv"`, `"image/*"`). @default any */
  accept?: readonly string[] | string;
  /** Most files of this upload, from 1 to the resolver's `maxFiles`. @default the resolver's */
  maxFiles?: number;
}

function invalid(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_INPUT", `upload ticket: ${message}`);
}

/** The checked ask: the ticket's file count and the page claims to sign. */
export function ticketAskClaims(
  ask: TicketAsk,
  ceiling: number,
): { maxFiles: number; claims: Record<string, string | number> } {
  const claims: Record<string, string | number> = {};
  const maxFiles = ask.maxFiles ?? ceiling;
  if (!Number.isSafeInteger(maxFiles) || maxFiles <= 0 || maxFiles > ceiling) {
    throw invalid(`maxFiles must be an integer from 1 to ${ceiling}`);
  }
  claims[TICKET_CLAIMS.maxFiles] = maxFiles;
  if (ask.message !== undefined) {
    const message = typeof ask.message === "string" ? ask.message.trim() : "";
    if (message === "" || message.length > 1024) throw invalid("message must be 1 to 1024 characters");
    claims[UPLOAD_PAGE_CLAIMS.message] = message;
  }
  if (ask.accept !== undefined) {
    const list = typeof ask.accept === "string" ? [ask.accept] : ask.accept;
    if (!Array.isArray(list)) throw invalid("accept must be a list of media types or extensions");
    const accept = list.map((entry) => String(entry).trim()).filter(Boolean);
    if (accept.some((entry) => entry.includes(",") || /\s/.test(entry)) || accept.join(",").length > 512) {
      throw invalid(
        "accept must be a short list of media types or extensions (.csv, text/csv) without commas",
      );
    }
    if (accept.length > 0) claims[UPLOAD_PAGE_CLAIMS.accept] = accept.join(",");
  }
  return { maxFiles, claims };
}

let askShape: ReturnType<typeof buildTicketAskShape> | undefined;
/**
 * The `get_upload_url` arguments that carry a {@link TicketAsk} (zod raw shape), built at the first
 * call, not at import (issue 39).
 */
export function ticketAskShape(): ReturnType<typeof buildTicketAskShape> {
  askShape ??= buildTicketAskShape();
  return askShape;
}

const buildTicketAskShape = () => ({
  message: z
    .string()
    .max(1024)
    .optional()
    .describe("What to ask the person for, shown on the upload page (e.g. 'The sales figures as a CSV')."),
  accept: z
    .array(z.string().max(100))
    .max(20)
    .optional()
    .describe("File types wanted, as extensions or media types (e.g. ['.csv', 'text/csv'])."),
  max_files: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("How many files to ask for (default: the server's limit)."),
});

/** The {@link TicketAsk} in a `get_upload_url` call's arguments. */
export function ticketAskOf(args: Record<string, unknown>): TicketAsk {
  const ask: TicketAsk = {};
  if (args.message !== undefined) ask.message = args.message as string;
  if (args.accept !== undefined) ask.accept = args.accept as string[];
  if (args.max_files !== undefined) ask.maxFiles = args.max_files as number;
  return ask;
}
