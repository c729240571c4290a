"""The success classifier (image -> P(success)) trained from labelled frames."""
