"""Reference sentences that estimate a query's background cosine level.

The embedding lane judges a document by how far its cosine stands above what
*unrelated* text scores for the same query. In a large collection the
collection itself provides that level; in a store of five entries it cannot
(with two documents the top z-score is 1 by construction). So the background
is always measured over the collection plus these fixed sentences: varied,
mutually unrelated statements of the kind a memory store holds, none about
bonsai's own subject matter. They are data, embedded once per model.
"""

from __future__ import annotations

BACKGROUND_SENTENCES: tuple[str, ...] = (
    "The staging cluster runs three replicas of the checkout service.",
    "Use tabs for indentation in the Makefile, spaces everywhere else.",
    "The quarterly report is due on the first Monday of the month.",
    "Our CSS uses a utility-first approach with a small custom palette.",
    "Invoices are generated in euros and rounded to two decimals.",
    "The mobile app supports Android 10 and newer only.",
    "Design reviews happen on Thursday afternoons in the large room.",
    "Kubernetes secrets are synced from the vault every ten minutes.",
    "The marketing site is built with a static generator and deployed nightly.",
    "Customer names must be displayed exactly as entered, including accents.",
    "The GraphQL gateway caches persisted queries for one hour.",
    "Prefer descriptive variable names over abbreviations in scripts.",
    "The warehouse scanner firmware only accepts uppercase barcodes.",
    "Meeting notes are kept in the shared drive under the team folder.",
    "The legacy billing module is written in COBOL and rarely touched.",
    "Screenshots in documentation should use the light theme.",
    "Password resets expire after thirty minutes.",
    "The data science team trains models on the GPU box every weekend.",
    "Commit messages start with a verb in the imperative mood.",
    "The office closes early on the last Friday before a holiday.",
    "Map tiles are served from a CDN with a seven day cache.",
    "Translations are managed in a spreadsheet by the localisation team.",
    "The game engine renders at sixty frames per second on consoles.",
    "Accessibility audits are required before each major release.",
    "The recipe service stores ingredient quantities in grams.",
    "Support tickets older than a week are escalated automatically.",
    "The API rate limit is one hundred requests per minute per key.",
    "Logo files live in the brand folder as SVG and PNG.",
    "The embedded controller talks to sensors over an I2C bus.",
    "Feature flags are cleaned up within two sprints of launch.",
    "The newsletter goes out every second Tuesday at nine.",
    "Audio files are normalised to minus fourteen LUFS before upload.",
    "Interns get read-only access to production dashboards.",
    "The spreadsheet macro breaks when a row contains merged cells.",
    "Backups of the photo archive are copied to tape each month.",
    "The chatbot greets users by first name when it is known.",
    "Shipping labels are printed on the thermal printer by the door.",
    "Release candidates are tagged with an rc suffix.",
    "The physics simulation uses a fixed time step of one millisecond.",
    "Holiday requests need approval from two managers.",
    "The search page highlights matching words in yellow.",
    "Sales figures are reconciled with the bank statements weekly.",
    "Video thumbnails are cropped to a sixteen by nine ratio.",
    "The wiki is the place for onboarding checklists.",
    "Temperature readings are stored in Celsius with one decimal.",
    "The printer on the third floor jams with heavy paper.",
    "Error pages should link back to the home page.",
    "The garden irrigation schedule changes with the seasons.",
)
