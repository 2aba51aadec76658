/**
 * The demo's one stdout, shared by its two writers: whole lines (the
 * narrator's events, banners) and text that streams in pieces (a model's live
 * text). A line printed while streamed text is mid-line starts on a line of
 * its own, and the text then resumes under its label, so neither cuts into
 * the other.
 */
export class DemoConsole {
  /** The label of the streamed text whose line is open, if any. */
  private streaming: string | undefined;
  /** True when a whole line was printed since the streamed text's last piece. */
  private interrupted = false;

  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  /** Prints one whole line. */
  line(text: string): void {
    if (this.streaming !== undefined && !this.interrupted) {
      this.out.write('\n');
      this.interrupted = true;
    }
    this.out.write(`${text}\n`);
  }

  /** Prints a piece of the streamed text `label` names (a new label starts a new block). */
  stream(label: string, text: string): void {
    if (label !== this.streaming) {
      this.endStream();
      this.out.write(`${label} `);
      this.streaming = label;
    } else if (this.interrupted) {
      this.out.write(`${label} (cont.) `);
    }
    this.interrupted = false;
    this.out.write(text.replaceAll('\n', '\n    '));
  }

  /** Ends the streamed text's line. */
  endStream(): void {
    if (this.streaming !== undefined && !this.interrupted) this.out.write('\n');
    this.streaming = undefined;
    this.interrupted = false;
  }
}
