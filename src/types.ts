/**
 * `mcp-file-bridge/types`: the pieces' secondary types, for code that names them: the parts of an
 * option (a hook, a sub-object), a method's arguments and results, the structural interfaces a
 * piece accepts in place of another piece. Types only; nothing here runs. The types a server author
 * names most (each piece's options, `ResolvedFile`, `StoredFile`, `FileStore`, …) are in the root.
 */

export type { InlineBudget, InlineBudgetOptions } from "./artifacts/inline-budget.js";
export type {
  ArtifactRegistry,
  EmbeddedResourceContents,
  FitOptions,
  ImageArtifact,
  ImageInput,
} from "./artifacts/types.js";
export type { SweepOptions } from "./bridge/options.js";
export type {
  FileSource,
  FileSourceKind,
  ResolverContext,
  ResolverResult,
} from "./bridge/types.js";
export type { PassedFile, WithFilesArgs } from "./bridge/with-files.js";
export type { FileBridgeErrorOptions } from "./errors/file-bridge-error.js";
export type { DownloadOffer } from "./links/download-offer.js";
export type { FileOutput, FileOutputBlocks } from "./links/file-output.js";
export type {
  AttachOptions,
  FileLinkInfo,
  FileLinkResult,
  LinkOptions,
  ParsedResourceUri,
  ResourceChangeSink,
  ResourceTemplateOptions,
  SyncResult,
  TemplateVariables,
} from "./registry/resource-registry.js";
export type {
  DirectUploadTarget,
  DownloadEvent,
  FileRoutesRegistry,
  UploadRateLimitInfo,
  UploadReplyFile,
  VerifiedTokenClaims,
} from "./routes/create-file-routes.js";
export type {
  DownloadClaimsFunction,
  DownloadUrlOptions,
  MintedUrl,
  MintOptions,
  SignedAction,
  SignedClaimValue,
  UrlSigner,
  VerifiedToken,
  VerifyOptions,
} from "./signing/types.js";
export type { FilesExtensionOptions } from "./uploads/files-extension.js";
export type { ClientFilesCapability, FileTransferDescriptor, FileValue } from "./uploads/files-wire.js";
export type { FileRequestOutcome, RequestFilesCallOptions } from "./uploads/request-files-flow.js";
export type {
  StagingObserver,
  StagingWrite,
  StagingWriteOptions,
  TusStaging,
} from "./uploads/tus/fs-staging.js";
export type { TusOptions, TusProgress, TusStagingSource } from "./uploads/tus/service.js";
export type { DirectUploadOptions } from "./uploads/types.js";
export type {
  RewrittenArgs,
  TicketAsk,
  UploadAttachOptions,
  UploadStatus,
  UploadTicket,
  UploadTicketRateLimitInfo,
  UploadToolWidget,
} from "./uploads/upload-handle-resolver.js";
