/**
 * The sim cameras of one MuJoCo world as camera-node sources: every camera renders the world's current state when
 * its node captures, and a new episode's seed redraws the domain randomisation (when on) for all of them at once.
 * Takes only the mujoco module, model and data, so any sim class can have cameras.
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { CameraFrame, CameraSource } from "../../contracts/camera.ts";
import type { SimCameraSpec } from "./cameraPose.ts";
import { SimCameras, type SimCamerasOptions } from "./SimCameras.ts";
import { DomainRandomizer, type RandomizationRanges } from "./DomainRandomizer.ts";

/** A MuJoCo world: what the renderer reads. */
export interface MujocoWorld {
  mujoco: MainModule;
  model: MjModel;
  data: MjData;
}

/** Options of {@link SimCameraSources}. */
export interface SimCameraSourcesOptions extends SimCamerasOptions {
  /** Domain randomisation ranges; absent: off. */
  randomize?: RandomizationRanges;
}

/** Camera sources over one world. */
export class SimCameraSources {
  readonly cameras: SimCameras;
  readonly randomizer: DomainRandomizer | null;
  #seed: number | null = null;

  constructor(world: MujocoWorld, specs: readonly SimCameraSpec[], opts: SimCameraSourcesOptions = {}) {
    this.cameras = SimCameras.create(world.mujoco, world.model, world.data, specs, opts);
    this.randomizer = opts.randomize ? new DomainRandomizer(world.mujoco, world.model, this.cameras.nominalColors(), this.cameras.names, opts.randomize) : null;
  }

  /** The source of camera `name` (its frames carry depth). */
  source(name: string): CameraSource {
    this.cameras.spec(name); // throws for an unknown name
    return {
      capture: (): CameraFrame => {
        const f = this.cameras.render(name);
        return { width: f.width, height: f.height, rgb: f.rgb, depth: f.depth };
      },
      reset: (seed) => this.reset(seed),
    };
  }

  /** Draws the randomisation of the episode with this seed (once per seed, whichever camera asks first). */
  reset(seed: number): void {
    if (!this.randomizer || seed === this.#seed) return;
    this.#seed = seed;
    this.cameras.setOverrides(this.randomizer.sample(seed));
  }

  close(): void {
    this.cameras.close();
  }
}
