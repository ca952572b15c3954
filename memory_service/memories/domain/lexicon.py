"""The words the grounding rule (`grounding.py`) knows about English, as data.

Kept apart from the rule so that a word can be added without reading the algorithm, and so that
the lists can be reviewed against the grounding bench (`bench/grounding/`): every entry is a
claim about what a paraphrase may change and what it may not.
"""

from __future__ import annotations


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words: they carry no fact of their own, so a value may add or drop them. Words that
# decide a fact ("before", "after", "more", "only", "no") are not here: see POLAR and NEGATORS.
FUNCTION_WORDS = _set(
    """
    a an the and or but if so as at by for from in into of on onto to with within via per about
    across along among around against than then there here this that these those it its it's is
    are was were be been being am do does did doing done have has had having i me my mine
    myself we us our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself they them their theirs themselves one's who whom whose which what when
    where why how whether while because though although can could may might must shall
    should will would also just too very really quite i'm i've i'd i'll let's we're we've we'll
    you're they're he's she's that's there's s t re ve ll d m please thanks thank ok okay yes
    yeah well oh hey hi hello any each other such own same both either all some during yet
    """
)

# Words an extractor adds when it writes a statement about someone ("the user prefers ...",
# "customer wants ..."): a value may carry them although the evidence does not.
FRAMING_WORDS = _set(
    """
    user users customer customers client clients person people someone they usual usually
    generally typically normally currently now still prefer prefers preferred preference
    preferences want wants wish like likes note noted says said mentioned mentions state states
    stated plan plans planning intend intends going named called team company family household
    """
)

# Words that make a statement its opposite. "n't" is spelled "not" before words are split.
NEGATORS = _set(
    """
    no not never nor none nobody nothing neither nowhere cannot without stop stopped stops
    avoid avoids avoided avoiding dislike dislikes disliked hate hates hated refuse refuses
    refused decline declines declined quit quits against lacks lack unable nope loathe loathes
    dont wont doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt havent hasnt
    hadnt aint mustnt neednt
    detest detests despise despises
    """
)

# What else an elliptic negation may hold ("but I can't", "please don't", "never have"): it then
# negates the clause before it.
ELLIPSIS = _set(
    """
    please thanks thank you sorry i we they he she can could do does did will would should
    have has had am is are was were be really honestly just still yet actually ok okay so and
    but or though either at all sadly unfortunately
    """
)

# Negations only before a verb: "stop sending" is "not send", "stop the pilot" is "end it".
STOPPING = _set("stop stops stopped")

# Words a paraphrase may not swap or add: if the value has one, its evidence must have it (or a
# word of the same group below). Order, direction, extent, time of day and week, period.
POLAR = _set(
    """
    before after above below over under more less fewer most least early earlier late later
    first last next previous prior only every always sometimes often rarely seldom since until
    increase decrease raise lower higher up down min max minimum maximum morning afternoon evening
    night
    tonight noon midnight lunchtime weekend weekends weekday weekdays am pm today tomorrow
    yesterday daily weekly biweekly monthly quarterly yearly annually annual monday tuesday
    wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
    january february march april maymonth june july august september october november
    december jan
    feb mar apr jun jul aug sep sept oct nov dec spring summer autumn fall winter north south
    east west left right inbound outbound internal external
    """
)

# Numbers spelled out are figures: compared exactly, after the ones below become digits.
NUMBER_VALUES = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "twice": 2,
    "thrice": 3,
}


NUMBER_WORDS = _set(
    """
    hundred thousand million billion trillion dozen half quarter double triple
    second third fourth fifth sixth seventh eighth ninth tenth
    """
)

# Past forms and plurals a suffix rule cannot undo.
IRREGULAR = {
    "went": "go",
    "gone": "go",
    "goes": "go",
    "bought": "buy",
    "paid": "pay",
    "sent": "send",
    "met": "meet",
    "spoke": "speak",
    "spoken": "speak",
    "told": "tell",
    "made": "make",
    "took": "take",
    "taken": "take",
    "began": "begin",
    "begun": "begin",
    "left": "leave",
    "got": "get",
    "gotten": "get",
    "ate": "eat",
    "eaten": "eat",
    "drove": "drive",
    "driven": "drive",
    "flew": "fly",
    "flown": "fly",
    "flies": "fly",
    "flight": "fly",
    "flights": "fly",
    "ran": "run",
    "wrote": "write",
    "written": "write",
    "chose": "choose",
    "chosen": "choose",
    "choice": "choose",
    "kept": "keep",
    "felt": "feel",
    "found": "find",
    "gave": "give",
    "given": "give",
    "held": "hold",
    "knew": "know",
    "known": "know",
    "led": "lead",
    "lost": "lose",
    "meant": "mean",
    "sold": "sell",
    "sale": "sell",
    "sales": "sell",
    "spent": "spend",
    "stood": "stand",
    "taught": "teach",
    "thought": "think",
    "understood": "understand",
    "won": "win",
    "children": "child",
    "kids": "child",
    "kid": "child",
    "men": "man",
    "women": "woman",
    "grew": "grow",
    "grown": "grow",
    "saw": "see",
    "seen": "see",
    "came": "come",
    "became": "become",
    "brought": "bring",
    "built": "build",
    "caught": "catch",
    "fed": "feed",
    "heard": "hear",
    "hid": "hide",
    "lent": "lend",
    "rode": "ride",
    "sang": "sing",
    "slept": "sleep",
    "swam": "swim",
    "threw": "throw",
    "wore": "wear",
    "worn": "wear",
    "did": "do",
    "signed": "sign",
    "lives": "live",
    "wives": "wife",
    "leaves": "leave",
    "e-mail": "email",
    "e-mails": "email",
    "mails": "email",
    "emailed": "email",
    "veggie": "vegetarian",
    "tries": "try",
    "tried": "try",
    "intention": "intend",
    "rose": "rise",
    "risen": "rise",
}
# Words after a subject that make it one: "Caroline is ...", "Omar went ..." (see
# `grounding._leading_names`); verbs ending in -s or -ed need no entry.
FINITE_VERBS = _set(
    """
    is was has had does did will would can could should may might must went said told took
    made got gave saw came became felt kept left lost met paid ran sent spent thought won
    wrote bought brought built chose drove ate flew grew heard held knew led sold taught
    spoke began drank forgot found stood understood hid lent rode sang slept swam threw wore
    """
)

# Words that say "not like": a value saying one needs one in its evidence, or a negated word of
# liking there ("dislikes X" from "I don't like X", never from "I don't mind X").
DISLIKING = frozenset(["dislike", "hate", "loathe", "detest", "despise"])
LIKING = frozenset(["like", "love", "enjoy", "fond", "keen", "fan", "care"])

# Words that say the same thing in a statement someone makes about themselves or a customer.
# Two words are synonyms when one group holds both (after `grounding.base` reduced them).
SYNONYMS: tuple[frozenset[str], ...] = tuple(
    _set(line)
    for line in """
    prefer like want love enjoy fond favorite favourite rather wish keen fan
    start begin commence kickoff kick launch open
    end finish conclude close wrap expire
    call phone ring dial
    buy purchase order acquire procure get buyer
    ship deliver send dispatch delivery shipment arrive
    order ship shipment
    meeting meet appointment schedule book calendar call slot session
    manager boss supervisor report lead head
    use utilize rely run adopt employ
    email mail inbox message write
    attend go visit participate went
    company firm business organisation organization employer org vendor supplier
    customer client account buyer purchaser
    contract agreement deal subscription plan
    price cost pricing rate fee charge
    discount rebate reduction markdown
    renew renewal extend extension
    cancel terminate drop churn
    big large huge
    small little tiny
    quick fast rapid prompt asap
    talk speak chat discuss mention say tell
    live reside base locate home
    move relocate
    allergic allergy
    trip travel fly journey
    help assist support
    need require must
    receive get obtain
    decide decision approve sign signoff authority
    budget spend fund
    competitor rival competition
    staff employee headcount worker personnel people team
    problem issue bug trouble complaint defect
    package packaging pack box
    invoice bill billing
    pay payment remit
    term condition
    time zone timezone
    job role position title work
    hire join onboard
    quit resign
    eat food meal dish diet
    drink beverage
    spouse partner
    dog puppy
    cat kitten
    car vehicle
    reach contact
    update inform notify
    text sms
    chat slack
    doc document
    info information detail
    fiscal financial
    year annual
    month monthly
    week weekly
    day daily
    quarter quarterly
    begin start
    happen occur take place
    enjoy hobby
    study learn
    practice train
    want need
    note remember
    happy pleased glad delighted thrilled satisfied content
    unhappy dissatisfied displeased frustrated upset annoyed
    near close nearby
    far distant remote
    fix repair mend resolve
    broken faulty defective
    tech technician engineer
    busy swamped overloaded slammed overwhelmed
    try attempt aim
    evaluate assess review consider compare
    create make build set
    show display present demo demonstrate
    explain clarify describe
    check verify confirm
    improve enhance better
    increase raise grow boost rise climb
    decrease reduce cut lower shrink
    keep retain maintain hold
    change modify alter adjust update switch
    cancel call off scrap
    continue keep carry proceed
    finish complete done wrap
    need want require
    allow let permit enable
    forbid prohibit ban bar
    give provide supply offer
    show demo
    suggest recommend propose advise
    agree accept approve okay consent
    reject decline refuse turn
    answer reply respond
    invite ask
    remind nudge
    visit stop drop
    quick brief short
    large big sizable
    cheap inexpensive affordable budget
    expensive pricey costly
    important key critical crucial essential vital
    main primary principal chief
    extra additional more another
    whole entire full complete
    usual regular normal standard typical
    often frequently regularly
    rarely seldom
    mostly mainly largely primarily
    currently presently now
    soon shortly
    right correct accurate
    wrong incorrect inaccurate
    mistake error
    goal target objective aim
    plan strategy roadmap
    deadline due
    meeting call sync catchup standup
    customer account
    vendor supplier provider
    product tool platform software solution system app application
    feature function capability functionality
    license licence seat
    user member
    employee staff colleague coworker
    boss manager supervisor lead
    owner founder
    partner spouse
    friend buddy pal
    home house apartment flat place
    car vehicle auto
    office workplace
    store shop
    town city
    country nation
    job work position role career
    hobby pastime interest
    food meal dish cuisine
    drink beverage
    doctor physician gp
    vacation holiday leave break trip
    exercise workout training
    run jog
    walk stroll hike
    sleep rest
    study learn
    teach train coach
    picture photo image
    movie film
    book novel
    song track tune
    kid child
    mom mum mother
    dad father
    shipment delivery consignment
    package parcel
    price cost rate fee quote
    bill invoice statement
    money funds cash budget
    profit margin
    revenue sales turnover income
    contract agreement deal
    term duration length period
    renew extend
    sign execute
    quit resign
    fire dismiss
    hire recruit employ
    move relocate
    start launch
    open launch
    report dashboard
    problem issue concern difficulty
    complaint grievance
    question query inquiry
    help support assist aid
    info information details data
    email mail
    phone mobile cell
    talk chat speak discuss converse
    tell inform notify let
    send forward
    get receive
    buy purchase
    pick choose select
    like enjoy love adore
    swamped slammed
    end finish terminate
    close shut
    headquarters hq
    eliminate remove ditch scrap rid drop replace
    enthusiastic keen excited eager interested fond passionate love fan
    run jog
    delay postpone defer push reschedule
    afraid scared frightened fear terrified
    ask request inquire
    offer offered available
    choose pick select opt
    return back
    big bigger large larger huge greater
    small smaller little
    stuff matter thing item topic
    read reread
    seat sit
    before until till prior
    hate loathe detest despise dislike
    """.strip().splitlines()
)

# Pairs a paraphrase never crosses: a value with one word of a pair whose evidence has the other.
ANTONYMS: tuple[tuple[str, str], ...] = tuple(
    (one, other)
    for one, _, other in (
        pair.partition("/")
        for pair in _set(
            """
    love/hate like/dislike like/hate prefer/avoid enjoy/hate accept/reject agree/disagree
    increase/decrease raise/lower rise/fall up/down more/less more/fewer most/least early/late
    earlier/later before/after above/below over/under first/last next/previous morning/evening
    morning/night morning/afternoon afternoon/evening day/night aisle/window hot/cold warm/cool
    open/close start/end begin/end start/stop buy/sell win/lose include/exclude allow/forbid
    allow/ban enable/disable internal/external inbound/outbound import/export credit/debit
    income/expense profit/loss high/low higher/lower big/small large/small long/short fast/slow
    quick/slow cheap/expensive new/old young/old strong/weak happy/sad easy/hard easy/difficult
    simple/complex formal/informal public/private online/offline remote/onsite remote/office
    paper/paperless upgrade/downgrade add/remove yes/no true/false light/dark north/south
    east/west left/right on/off always/never positive/negative present/absent arrive/leave
    husband/wife son/daughter brother/sister mother/father boy/girl male/female annual/monthly
    weekly/monthly daily/weekly inside/outside indoor/outdoor maximum/minimum max/min
    upper/lower plus/minus full/empty heavy/light sweet/savory dry/wet wide/narrow loud/quiet
    tall/short hourly/daily cold/warm cool/hot better/worse good/bad best/worst more/fewer
    success/failure pass/fail true/false easy/tough rich/poor clean/dirty safe/dangerous
    legal/illegal possible/impossible likely/unlikely available/unavailable able/unable
    valid/invalid correct/wrong right/wrong same/different similar/different common/rare
    permanent/temporary fulltime/parttime junior/senior major/minor top/bottom front/back
    front/rear above/beneath inside/outdoors arrival/departure accept/decline approve/reject
    agree/refuse win/fail gain/lose profit/deficit import/export lend/borrow push/pull
    send/receive give/take teach/learn ask/answer question/answer come/go enter/exit
    expand/shrink expand/contract accelerate/slow accelerate/delay speed/slow faster/slower
    heavier/lighter bigger/smaller larger/smaller longer/shorter older/newer higher/lower
    rise/drop grow/shrink gain/drop strengthen/weaken tighten/loosen raise/cut include/omit
    present/past future/past before/since since/until customer/vendor
    client/vendor customer/supplier client/supplier buyer/seller landlord/tenant lender/borrower
    start/finish begin/finish add/subtract sooner/later earlier/later stay/leave join/leave
    increase/reduce increase/cut grow/reduce relax/stress relaxing/stressful calm/stressful
    """
        )
    )
)
