/**
 * @module secret-input — reads a secret (a fund password) for the CLI without it ever being a
 * command-line argument: from the terminal with echo off, typed twice, or from the first line of
 * standard input when that is not a terminal.
 */

/** The longest secret line read (bytes): far beyond any password the server accepts. */
const MAX_SECRET_BYTES = 4096;

/** The input and output a secret is read through (process.stdin / process.stderr by default). */
export interface SecretStreams {
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WriteStream;
}

/**
 * Reads a new secret: on a terminal, prompts `<prompt>: ` and `<prompt> (again): ` without echo
 * and requires both to match; otherwise takes the first line of standard input (reading stops
 * there, so an input left open does not hang the CLI). Rejects with an Error for the operator
 * (mismatch, cancelled, empty).
 */
export async function readNewSecret(
  prompt: string,
  streams: SecretStreams = { input: process.stdin, output: process.stderr },
): Promise<string> {
  if (streams.input.isTTY !== true) {
    const line = await readFirstLine(streams.input);
    if (line === '') throw new Error('standard input is empty: give the password on its first line');
    return line;
  }
  const [first, second] = await readHiddenLines([`${prompt}: `, `${prompt} (again): `], streams);
  if (first !== second) throw new Error('the two entries differ: nothing was changed');
  return first as string;
}

/** The first line of `input` (without its line end), or all of it when it has no line end. */
function readFirstLine(input: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (line: string): void => {
      input.off('data', onData);
      input.pause();
      resolve(line.replace(/\r$/, ''));
    };
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString();
      const end = text.indexOf('\n');
      if (end !== -1) done(text.slice(0, end));
      else if (text.length > MAX_SECRET_BYTES) {
        input.off('data', onData);
        input.pause();
        reject(new Error(`the first line of standard input is longer than ${MAX_SECRET_BYTES} bytes`));
      }
    };
    input.on('data', onData);
    input.once('end', () => done(text));
    input.once('error', reject);
  });
}

/**
 * Lines typed on the terminal with echo off, one after each prompt. Raw mode (no echo) is on
 * before the first prompt shows and stays on until the last line, so that nothing typed early is
 * echoed. Enter ends a line, Backspace edits, Ctrl-C or Ctrl-D cancels.
 */
function readHiddenLines(prompts: readonly string[], { input, output }: SecretStreams): Promise<string[]> {
  input.setRawMode(true);
  input.resume();
  output.write(prompts[0] ?? '');
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    let text = '';
    let afterCr = false;
    const finish = (error?: Error): void => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      if (error === undefined) resolve(lines);
      else reject(error);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        // A terminal that sends CR LF for Enter ends one line, not two.
        const skip = afterCr && ch === '\n';
        afterCr = ch === '\r';
        if (skip) continue;
        if (ch === '\r' || ch === '\n') {
          lines.push(text);
          text = '';
          output.write('\n');
          if (lines.length === prompts.length) return finish();
          output.write(prompts[lines.length] ?? '');
        } else if (ch === '\u0003' || ch === '\u0004') {
          output.write('\n');
          return finish(new Error('cancelled: nothing was changed'));
        } else if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else if (text.length < MAX_SECRET_BYTES) text += ch;
      }
    };
    input.on('data', onData);
  });
}
