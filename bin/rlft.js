#!/usr/bin/env node
// The rlft command. Sources are TypeScript run through tsx's loader, so there is no build step.
import { register } from "tsx/esm/api";

register();
await import("../cli/rlft.ts");
