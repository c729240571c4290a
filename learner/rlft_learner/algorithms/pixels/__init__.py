"""Both online learners over a base that sees cameras: the encoder paths (frozen base encoder or own, DrQ), batches with frames, the residual graph with the encoders inside."""
