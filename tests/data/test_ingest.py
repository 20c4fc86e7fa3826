"""ingest(): user files into passages. Small files made here, plus the three real FinanceBench PDFs,
whose pages are checked against the independent PyMuPDF text in ``pages.jsonl.gz``."""

from __future__ import annotations

import gzip
import json
import logging
import re

import pytest
from conftest import require

from aethel_lite.data.ingest import ingest, pdf_pages
from aethel_lite.errors import DataError, DataNotFoundError, ParameterError


def make_pdf(path, pages):
    """Write a minimal valid PDF with one line of Helvetica text per page (no extra libraries)."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        None,
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for text in pages:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET" if text else ""
        objects.append(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
        content = len(objects)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{obj}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


# ------------------------------------------------------------------------------ text files
def test_text_paragraphs(tmp_path):
    (tmp_path / "memo.txt").write_text("First paragraph\nstill first.\n\n  \n\nSecond one.\n\n\nThird.\n")
    (tmp_path / "notes.md").write_text("# Title\n\nNorthRiver IV LP acquired Acme.\n")
    ds = ingest([tmp_path / "memo.txt", tmp_path / "notes.md"])
    assert [(p.pid, p.text) for p in ds.passages] == [
        ("memo#0", "First paragraph\nstill first."),
        ("memo#1", "Second one."),
        ("memo#2", "Third."),
        ("notes#0", "# Title"),
        ("notes#1", "NorthRiver IV LP acquired Acme."),
    ]
    assert ds.queries == [] and ds.passages[0].doc_id == "memo" and ds.passages[0].meta["paragraph"] == 0
    assert ds.passages[0].meta["path"] == str(tmp_path / "memo.txt")


def test_text_windows(tmp_path):
    words = [f"w{i}" for i in range(25)]
    (tmp_path / "a.txt").write_text(" ".join(words[:12]) + "\n\n" + " ".join(words[12:]))
    ds = ingest(tmp_path / "a.txt", chunk_words=10, chunk_overlap=2)
    texts = [p.text.split() for p in ds.passages]
    assert texts == [words[0:10], words[8:18], words[16:25]]
    assert [p.pid for p in ds.passages] == ["a#c0", "a#c1", "a#c2"]
    full = (tmp_path / "a.txt").read_text()
    assert all(full[p.meta["char_start"] : p.meta["char_end"]] == p.text for p in ds.passages)


def test_directory_recursive_sorted_and_hidden_skipped(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.md").write_text("zed")
    (tmp_path / "a.txt").write_text("ay")
    (tmp_path / ".hidden.txt").write_text("secret")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.txt").write_text("git internals")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    ds = ingest(tmp_path)
    assert [p.pid for p in ds.passages] == ["a#0", "b/z#0"]  # ids are paths relative to the folder given
    # the same file named twice is read once
    assert len(ingest([tmp_path / "a.txt", tmp_path / "a.txt"]).passages) == 1


def test_duplicate_stems_use_relative_paths(tmp_path):
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "report.txt").write_text(f"from {sub}")
    ds = ingest(tmp_path)
    assert [p.pid for p in ds.passages] == ["x/report#0", "y/report#0"]
    ds.validate()


def test_ids_do_not_depend_on_other_files(tmp_path):
    """A file's ids are the same whatever else is indexed (today a stem collision renamed both files)."""
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "report.txt").write_text(f"from {sub}")
    (tmp_path / "memo.txt").write_text("another file")
    assert [p.pid for p in ingest(tmp_path / "x").passages] == ["report#0"]
    assert [p.pid for p in ingest([tmp_path / "x", tmp_path / "memo.txt"]).passages] == ["report#0", "memo#0"]
    with pytest.raises(
        DataError, match=r"document id 'report' would name two files, .*x/report\.txt and .*y/report\.txt"
    ):
        ingest([tmp_path / "x", tmp_path / "y"])
    assert [p.doc_id for p in ingest(tmp_path).passages] == [
        "memo",
        "x/report",
        "y/report",
    ]  # never an absolute path
    (tmp_path / "x" / "report.md").write_text("markdown twin")
    with pytest.raises(DataError, match="document id 'report' would name two files"):
        ingest(tmp_path / "x")


def test_passage_jsonl_input(tmp_path):
    rows = [
        {
            "pid": "3M_2018#p1",
            "doc_id": "3M_2018",
            "title": "3M_2018",
            "text": "Revenue rose.",
            "meta": {"page": 1},
        },
        {"pid": "3M_2018#p2", "text": "Costs fell."},
        {"pid": "blank", "text": "   "},
    ]
    path = tmp_path / "pages.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ds = ingest(path)
    assert [(p.pid, p.doc_id, p.title) for p in ds.passages] == [
        ("3M_2018#p1", "3M_2018", "3M_2018"),
        ("3M_2018#p2", "3M_2018#p2", ""),
    ]
    assert ds.passages[0].meta == {"page": 1, "path": str(path), "line": 1}
    path.write_text('{"pid": "a", "text": "ok"}\n{"text": "no pid"}\n')
    with pytest.raises(DataError, match=r"pages\.jsonl:2: field 'pid' must be a non-empty string"):
        ingest(path)
    path.write_text('{"pid": "a", "text": "ok"}\n{"pid": "a", "text": "again"}\n')
    with pytest.raises(DataError, match="duplicate passage pid 'a'"):
        ingest(path)
    path.write_text('{"pid": "a", "text": "ok"}\nnot json\n')
    with pytest.raises(DataError, match=r"pages\.jsonl:2: malformed JSON"):
        ingest(path)
    # folders are never searched for passage files
    (tmp_path / "notes.txt").write_text("plain")
    assert [p.pid for p in ingest(tmp_path).passages] == ["notes#0"]


def test_errors_on_text_inputs(tmp_path):
    with pytest.raises(DataNotFoundError, match=re.escape(str(tmp_path / "missing.txt"))):
        ingest(tmp_path / "missing.txt")
    (tmp_path / "sheet.xlsx").write_bytes(b"PK")
    with pytest.raises(DataError, match=r"sheet\.xlsx: unsupported file type '\.xlsx'"):
        ingest(tmp_path / "sheet.xlsx")
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.txt: not UTF-8"):
        ingest(tmp_path / "latin.txt")
    (tmp_path / "blank.txt").write_text("\n\n   \n")
    with pytest.raises(DataError, match=r"no text found in .*blank\.txt"):
        ingest(tmp_path / "blank.txt")
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(DataError, match="no .* files found"):
        ingest(empty_dir)
    (tmp_path / "ok.txt").write_text("fine")
    with pytest.raises(ParameterError, match="chunk_overlap"):
        ingest(tmp_path / "ok.txt", chunk_words=5, chunk_overlap=5)
    with pytest.raises(ParameterError, match="chunk_words"):
        ingest(tmp_path / "ok.txt", chunk_words=0)


# ------------------------------------------------------------------------------ PDFs made here
def test_pdf_one_passage_per_page(tmp_path, caplog):
    make_pdf(tmp_path / "deal.pdf", ["NorthRiver IV LP acquired Acme Corp.", "", "Closing date (2021)."])
    with caplog.at_level(logging.WARNING):
        ds = ingest(tmp_path / "deal.pdf")
    assert [p.pid for p in ds.passages] == ["deal#p0", "deal#p2"]  # the blank page is skipped, numbering kept
    assert "NorthRiver IV LP acquired Acme Corp." in ds.passages[0].text
    assert "Closing date (2021)." in ds.passages[1].text
    assert ds.passages[1].meta["page"] == 2 and ds.meta["empty_pages"] == 1
    assert "1 of 3 pages have no extractable text" in caplog.text
    chunked = ingest(tmp_path / "deal.pdf", chunk_words=3, chunk_overlap=1)
    assert [p.pid for p in chunked.passages][:3] == ["deal#p0c0", "deal#p0c1", "deal#p0c2"]


def test_encrypted_pdf(tmp_path):
    from pypdf import PdfReader, PdfWriter

    src = make_pdf(tmp_path / "plain.pdf", ["Confidential term sheet"])
    writer = PdfWriter(clone_from=PdfReader(src))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    with open(tmp_path / "locked.pdf", "wb") as fh:
        writer.write(fh)
    with pytest.raises(DataError, match=r"locked\.pdf: encrypted with a password"):
        ingest(tmp_path / "locked.pdf")
    # encrypted with an empty user password (owner restrictions only): readable
    writer = PdfWriter(clone_from=PdfReader(src))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    with open(tmp_path / "restricted.pdf", "wb") as fh:
        writer.write(fh)
    assert "Confidential term sheet" in ingest(tmp_path / "restricted.pdf").passages[0].text


@pytest.mark.parametrize("content", [b"", b"%PDF-1.4\nthis is not a pdf at all", b"\x00\x01garbage"])
def test_corrupt_pdf_names_the_file(tmp_path, content):
    (tmp_path / "broken.pdf").write_bytes(content)
    with pytest.raises(DataError, match=r"broken\.pdf: unreadable PDF"):
        ingest(tmp_path / "broken.pdf")


def test_corrupt_pdf_inside_folder_names_the_file(tmp_path):
    make_pdf(tmp_path / "good.pdf", ["fine"])
    (tmp_path / "bad.pdf").write_bytes(b"not a pdf")
    with pytest.raises(DataError, match=r"bad\.pdf"):
        ingest(tmp_path)


# ------------------------------------------------------------------------------ real PDFs
@pytest.fixture(scope="module")
def real_pdfs(real_data):
    folder = real_data / "financebench" / "pdfs"
    names = [
        "COSTCO_2023_8K_dated-2023-08-16",
        "JOHNSON_JOHNSON_2023_8K_dated-2023-08-23",
        "MCDONALDS_2023Q1_EARNINGS",
    ]
    for name in names:
        require(folder / f"{name}.pdf")
    pages_file = require(real_data / "financebench" / "pages.jsonl.gz")
    reference = {}
    with gzip.open(pages_file, "rt", encoding="utf-8") as fh:
        for line in fh:
            if any(line.startswith(f'{{"doc_name": "{n}"') for n in names):
                row = json.loads(line)
                reference[f"{row['doc_name']}#p{row['page']}"] = row["text"]
    return folder, names, reference


def test_real_pdfs_match_pymupdf_pages(real_pdfs):
    folder, names, reference = real_pdfs
    ds = ingest(folder).validate()
    assert {p.doc_id for p in ds.passages} == set(names)
    # same page ids as FinanceBench's pages.jsonl.gz (extracted independently with PyMuPDF)
    assert {p.pid for p in ds.passages} == set(reference)
    tok = re.compile(r"[a-z0-9]+")

    def jaccard(a, b):
        a, b = set(tok.findall(a.lower())), set(tok.findall(b.lower()))
        return len(a & b) / len(a | b)

    for p in ds.passages:
        same = jaccard(p.text, reference[p.pid])
        others = [jaccard(p.text, t) for pid, t in reference.items() if pid != p.pid]
        assert same > 0.7, p.pid
        assert same > max(others), p.pid  # the text is from the right page, not just the right filing


def test_real_pdf_pages_helper(real_pdfs):
    folder, names, reference = real_pdfs
    pages = pdf_pages(folder / f"{names[2]}.pdf")
    assert len(pages) == sum(pid.startswith(names[2] + "#") for pid in reference)
