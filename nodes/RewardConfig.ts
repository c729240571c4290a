/** The `reward` section of a launch file: which automatic reward sources may end an episode. */
import { z } from "zod";

/** Schema of the `reward` section. */
export const RewardSchema = z
  .object({
    /** Sim only: the task's ground-truth success/failure ends the episode. Off to practise labelling in sim. */
    sim_ground_truth: z.boolean().default(true),
    classifier: z
      .object({
        /** Directory written by `python3 -m rlft_learner train-classifier` (classifier.json + ONNX). */
        model: z.string(),
        /** Success probability at or above which a frame counts as success (HIL-SERL uses a high threshold). */
        threshold: z.number().min(0).max(1).default(0.9),
        /** Consecutive frames at or above the threshold before the episode ends as a success (one noisy frame never does). */
        consecutive: z.number().int().min(1).default(2),
      })
      .strict()
      .optional(),
  })
  .strict();

/** The parsed `reward` section. */
export type RewardConfig = z.infer<typeof RewardSchema>;

/** Defaults of the section. */
export const REWARD_DEFAULTS: RewardConfig = RewardSchema.parse({});
