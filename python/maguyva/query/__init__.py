"""The answering side of maguyva: retrieve, fuse, present."""
