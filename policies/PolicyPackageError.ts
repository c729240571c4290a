/** Why a policy package was refused. */
export type PolicyPackageErrorCode = "missing_file" | "invalid_json" | "schema" | "dims" | "sha256_mismatch" | "incompatible" | "kind" | "base_mismatch" | "tokenizer" | "signature" | "too_large";

/** A policy package that failed to load, verify or match the robot; `path` names the file or directory. */
export class PolicyPackageError extends Error {
  readonly code: PolicyPackageErrorCode;
  readonly path: string | undefined;

  constructor(code: PolicyPackageErrorCode, message: string, options: { cause?: unknown; path?: string } = {}) {
    super(message, { cause: options.cause });
    this.name = "PolicyPackageError";
    this.code = code;
    this.path = options.path;
  }
}
