"""memlint verify: run a training script for a few steps and watch its memory."""
