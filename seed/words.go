package seed

// The vocabulary the generator draws from. None of it contains the planted
// query terms (see Terms), so that their match counts are exact; a test
// checks this.

var firstNames = []string{
	"Ada", "Alan", "Amara", "Anders", "Aiko", "Beatriz", "Bilal", "Camille", "Carlos", "Chen",
	"Chloe", "Dario", "Deepa", "Dmitri", "Elena", "Emeka", "Emma", "Farah", "Felix", "Fatima",
	"Gabriel", "Grace", "Hana", "Hugo", "Ines", "Isaac", "Ivana", "Jamal", "Jana", "Javier",
	"Jin", "Julia", "Kai", "Kavya", "Keanu", "Lars", "Leila", "Liam", "Lucia", "Mai",
	"Marco", "Maria", "Mateo", "Mei", "Mohammed", "Nadia", "Nikolai", "Noah", "Nora", "Olga",
	"Omar", "Paulo", "Priya", "Quentin", "Rafael", "Rania", "Rosa", "Ryo", "Sakura", "Samuel",
	"Sara", "Sean", "Sofia", "Soren", "Tariq", "Tomas", "Uma", "Valentina", "Victor", "Wei",
	"Willa", "Yara", "Yusuf", "Zainab", "Zoe", "Ingrid", "Kofi", "Lena", "Pedro", "Tess",
}

var lastNames = []string{
	"Abara", "Almeida", "Andersson", "Bauer", "Becker", "Bianchi", "Brown", "Castillo", "Chowdhury", "Costa",
	"Dubois", "Dvorak", "Eriksen", "Fischer", "Fontaine", "Garcia", "Gonzalez", "Haddad", "Hansen", "Hoffmann",
	"Ivanova", "Jensen", "Kaur", "Kim", "Kowalski", "Kruger", "Larsen", "Lee", "Lopez", "Martin",
	"Meyer", "Moreau", "Muller", "Nakamura", "Nguyen", "Novak", "Okafor", "Olsen", "Patel", "Pereira",
	"Petrov", "Quinn", "Rossi", "Russo", "Sato", "Schmidt", "Silva", "Singh", "Smith", "Suzuki",
	"Tanaka", "Taylor", "Torres", "Van Dijk", "Varga", "Wagner", "Walker", "Weber", "Wong", "Yamamoto",
	"Young", "Zhang", "Zielinski", "O'Brien", "Lindqvist", "Mensah", "Haugen", "Romero", "Sousa", "Volkov",
}

var emailDomains = []string{"example.com", "example.org", "example.net", "mail.example", "post.example", "inbox.example"}

var customerNotes = []string{
	"", "", "", "", "", "", "Prefers invoices in English.", "Wholesale account, net 30.",
	"Ships to the office, not home.", "Asked for receipts by email.", "VIP since the spring launch.",
	"Reseller: check the tax id before shipping.",
}

// countries pairs each price currency with the countries of the customers
// who usually pay in it.
var countries = map[string][]string{
	"USD": {"US", "US", "US", "MX", "BR", "SG", "AE"},
	"EUR": {"DE", "FR", "NL", "ES", "IT", "AT", "IE", "PT", "FI"},
	"GBP": {"GB", "GB", "GB", "IE"},
	"CAD": {"CA"},
	"AUD": {"AU", "AU", "NZ"},
}

// product is one thing a business sells: its name, a longer text and a
// price in minor units, used nominally in every currency ($49, €49, £49),
// the way shops price for each market.
type product struct {
	name, description string
	price             int64
}

// template is the kind of business a seeded business is.
type template struct {
	name, domain string
	products     []product
}

var templates = []template{
	{"Brightwater Outfitters", "brightwater-outfitters.example", []product{
		{"Trail running shoes", "Lightweight trail shoes with a rock plate and a grippy outsole.", 12900},
		{"Merino base layer", "Long-sleeve merino wool base layer, 200 g/m².", 7900},
		{"Ultralight tent", "Two-person freestanding tent, 1.2 kg packed.", 42900},
		{"Down sleeping bag", "Comfort rated to -5 °C, 800-fill responsibly sourced down.", 34900},
		{"Headlamp 400", "Rechargeable 400-lumen headlamp with red night mode.", 4900},
		{"Insulated bottle", "Double-walled steel bottle, keeps drinks cold for 24 hours.", 3500},
		{"Rain shell jacket", "Three-layer waterproof shell with pit zips.", 21900},
		{"Trekking poles", "Carbon trekking poles, pair, with flick locks.", 11900},
		{"Camp stove kit", "Canister stove, pot and windscreen in one kit.", 8900},
		{"Wool hiking socks", "Cushioned wool socks, three pairs.", 2900},
		{"Daypack 24 L", "24-litre daypack with a ventilated back panel.", 9900},
		{"Gift card", "A digital gift card delivered by email.", 5000},
	}},
	{"Lumen Type Foundry", "lumen-type.example", []product{
		{"Font licence: Halden", "Desktop licence for the Halden family, up to five users.", 9900},
		{"Font licence: Orrery", "Web licence for Orrery, up to 100,000 monthly views.", 14900},
		{"Variable font bundle", "Every variable font in the library, desktop and web.", 59900},
		{"App embedding licence", "Licence to embed one family in a mobile app.", 49900},
		{"Custom glyph work", "Design of up to twenty custom glyphs.", 120000},
	}},
	{"Harbor & Pine Studio", "harbor-pine.example", []product{
		{"Brand identity package", "Logo, palette, type system and a short brand guide.", 480000},
		{"Website design sprint", "One-week design sprint with a clickable prototype.", 350000},
		{"Monthly retainer", "Design retainer, twenty hours a month.", 220000},
		{"Illustration set", "Set of twelve spot illustrations.", 90000},
		{"Consultation hour", "One hour of design consultation by video call.", 15000},
	}},
	{"Copperleaf Games", "copperleaf-games.example", []product{
		{"Starter pack", "Starter pack with 1,000 gems and a hero skin.", 499},
		{"Gem chest", "Chest of 5,500 gems.", 2499},
		{"Season pass", "Season pass with every reward track unlocked.", 999},
		{"Founder's edition", "Founder's edition upgrade with the soundtrack.", 3999},
	}},
	{"Meridian Language School", "meridian-languages.example", []product{
		{"Group course, 10 weeks", "Ten weekly evening lessons in a small group.", 39000},
		{"Private lesson", "One 60-minute private lesson online.", 4500},
		{"Exam preparation", "Six-week intensive exam preparation course.", 52000},
		{"Placement test", "Written and oral placement test with feedback.", 2500},
	}},
	{"Fernwood Bakery", "fernwood-bakery.example", []product{
		{"Sourdough loaf", "Naturally leavened country loaf, 1 kg.", 850},
		{"Pastry box", "Box of six seasonal pastries.", 2400},
		{"Celebration cake", "Layer cake for twelve, ordered two days ahead.", 6500},
		{"Bread subscription", "A loaf every week for a month.", 3200},
		{"Baking class", "Three-hour weekend bread-baking class.", 9500},
	}},
}

var linkExtras = []string{
	"Free shipping on orders over 100.", "Ships within two business days.",
	"Digital delivery right after payment.", "Limited run: while stocks last.",
	"Price includes VAT where it applies.", "",
}

var campaigns = []string{"spring_sale", "newsletter", "black_friday", "referral", "summer_drop", "partner_promo"}

var invoiceNotes = []string{"Deposit", "Balance", "Milestone 1", "Milestone 2", "Final invoice", "Rush fee"}
