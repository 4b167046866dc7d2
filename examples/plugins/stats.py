"""stats: counts lines and words, and lists the most frequent words at the end
(-o stats.top=N, default 3)."""
import textproc

_words = {}


def on_line(line):
    words = line.text.split()
    if not words:
        return
    textproc.count("stats.lines with words")
    textproc.count("stats.words", len(words))
    for word in words:
        word = word.strip(".,;:!?\"'()").lower()
        if any(c.isalpha() for c in word):  # not a masked word
            _words[word] = _words.get(word, 0) + 1


def on_end():
    top = int(textproc.option("stats.top", "3"))
    # ties are broken by the word itself: the output is the same on every Python
    ranked = sorted(_words.items(), key=lambda item: (-item[1], item[0]))[:top]
    textproc.emit("-- top %d words --" % top)
    for word, n in ranked:
        textproc.emit("%4d  %s" % (n, word))
