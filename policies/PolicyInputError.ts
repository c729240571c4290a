/** Thrown for inputs the policy refuses (non-finite or wrongly shaped observations, missing or wrong frames); the caller holds the robot. */
export class PolicyInputError extends Error {
  readonly code: "non_finite_observation" | "bad_shape" | "bad_image";

  constructor(code: PolicyInputError["code"], message: string) {
    super(message);
    this.name = "PolicyInputError";
    this.code = code;
  }
}
