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
 * and requires both to match; otherwise reads standard input to its end and takes its one line.
 * Rejects with an Error for the operator (mismatch, cancelled, empty, several lines).
 */
export async function readNewSecret(
  prompt: string,
  streams: SecretStreams = { input: process.stdin, output: process.stderr },
): Promise<string> {
  if (streams.input.isTTY !== true) return oneLine(await readAll(streams.input));
  const first = await readHidden(`${prompt}: `, streams);
  const second = await readHidden(`${prompt} (again): `, streams);
  if (first !== second) throw new Error('the two entries differ: nothing was changed');
  return first;
}

/** The single line of `text` (a final newline is dropped). */
function oneLine(text: string): string {
  const line = text.replace(/\r?\n$/, '');
  if (line === '') throw new Error('standard input is empty: give the password on its first line');
  if (/[\r\n]/.test(line)) throw new Error('standard input holds several lines: give the password alone');
  return line;
}

function readAll(input: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    input.on('data', (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > MAX_SECRET_BYTES) {
        input.destroy();
        reject(new Error(`standard input is longer than ${MAX_SECRET_BYTES} bytes: give the password alone`));
      } else chunks.push(bytes);
    });
    input.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    input.once('error', reject);
  });
}

/** One line typed on the terminal with echo off (raw mode): Enter ends it, Backspace edits, Ctrl-C or Ctrl-D cancels. */
function readHidden(prompt: string, { input, output }: SecretStreams): Promise<string> {
  output.write(prompt);
  input.setRawMode(true);
  input.resume();
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (error?: Error): void => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      if (error === undefined) resolve(text);
      else reject(error);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003' || ch === '\u0004') return finish(new Error('cancelled: nothing was changed'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else if (text.length < MAX_SECRET_BYTES) text += ch;
      }
    };
    input.on('data', onData);
  });
}
